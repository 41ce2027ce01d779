import { Button, Group } from '@mantine/core'
import { useState } from 'react'

/**
 * Previous and next page of a table whose cursor is in the address. The cursors of the pages before are kept for
 * the filters they were read with: a changed filter starts again with no page before it.
 */
export function Pager(props: {
  /** The table's address without its cursor. */
  filters: string
  after?: string
  hasMore: boolean
  nextCursor?: string | null
  onPage: (after: string | undefined) => void
}) {
  const { filters, after, hasMore, nextCursor, onPage } = props
  const [back, setBack] = useState<{ filters: string; cursors: string[] }>({ filters, cursors: [] })
  const cursors = back.filters === filters ? back.cursors : []
  return (
    <Group>
      <Button
        variant="default"
        disabled={cursors.length === 0}
        onClick={() => {
          setBack({ filters, cursors: cursors.slice(0, -1) })
          onPage(cursors[cursors.length - 1] || undefined)
        }}
      >
        Previous page
      </Button>
      <Button
        variant="default"
        disabled={!hasMore}
        onClick={() => {
          setBack({ filters, cursors: [...cursors, after ?? ''] })
          onPage(nextCursor ?? undefined)
        }}
      >
        Next page
      </Button>
    </Group>
  )
}
