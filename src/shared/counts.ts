/**
 * How many of something each key holds open (sends in flight, streams, exports): a map that forgets a key whose
 * count falls to zero, so it holds only keys with something open.
 */
export class Counts extends Map<string, number> {
  of(key: string): number {
    return this.get(key) ?? 0
  }

  add(key: string, n: number): void {
    const sum = this.of(key) + n
    if (sum > 0) this.set(key, sum)
    else this.delete(key)
  }
}
