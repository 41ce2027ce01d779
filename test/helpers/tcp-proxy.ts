import { createServer, type Server, type Socket, connect } from 'node:net'

export type CutMode =
  /** Drops every open connection and refuses new ones, like a server that went away. */
  | 'reset'
  /** Keeps connections open but moves no bytes either way, like a network partition. */
  | 'blackhole'

/**
 * A TCP proxy for fault tests: forwards a local port to `target` until cut, then drops or
 * stalls traffic until restored. It keeps its listening port across cuts, so clients reconnect to it.
 */
export interface TcpProxy {
  port: number
  cut(mode?: CutMode): void
  restore(): void
  close(): Promise<void>
}

interface Link {
  client: Socket
  upstream: Socket
  held: [Socket, Buffer][]
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let state: 'open' | CutMode = 'open'
  const links = new Set<Link>()

  const server: Server = createServer((client) => {
    client.on('error', () => undefined)
    if (state === 'reset') return client.destroy()
    const upstream = connect(target.port, target.host)
    upstream.on('error', () => undefined)
    const link: Link = { client, upstream, held: [] }
    links.add(link)
    const close = () => {
      links.delete(link)
      client.destroy()
      upstream.destroy()
    }
    client.on('close', close)
    upstream.on('close', close)
    // While stalled, bytes are held back (as a partitioned network would) and delivered on restore.
    client.on('data', (chunk: Buffer) =>
      state === 'blackhole' ? link.held.push([upstream, chunk]) : upstream.write(chunk),
    )
    upstream.on('data', (chunk: Buffer) =>
      state === 'blackhole' ? link.held.push([client, chunk]) : client.write(chunk),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port

  return {
    port,
    cut(mode = 'reset') {
      state = mode
      if (mode === 'reset') for (const link of [...links]) link.client.destroy()
    },
    restore() {
      state = 'open'
      for (const link of links) for (const [to, chunk] of link.held.splice(0)) to.write(chunk)
    },
    async close() {
      for (const link of [...links]) link.client.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
