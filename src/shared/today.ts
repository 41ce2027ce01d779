/** Today's date in UTC as YYYY-MM-DD: the day "overdue" and a summary's default `as_of` are measured against. */
export const utcDay = (now = new Date()): string => now.toISOString().slice(0, 10)
