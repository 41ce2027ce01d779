import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  json: { id: string; type: string; [k: string]: any }
}

/** How the receiver answers the n-th request (0-based); leave the response open to hang. */
export type Behaviour = (n: number, req: Received, res: ServerResponse) => void

export interface Receiver {
  url: string
  received: Received[]
  behave(behaviour: Behaviour): void
  /** Resolves once `predicate` holds for what was received, or fails after `ms`. */
  until(predicate: (received: Received[]) => boolean, ms?: number): Promise<Received[]>
  close(): Promise<void>
}

export const ok: Behaviour = (_n, _req, res) => res.writeHead(200).end('ok')

/** A real HTTP receiver on 127.0.0.1, recording every request. */
export async function startReceiver(behaviour: Behaviour = ok): Promise<Receiver> {
  const received: Received[] = []
  let behave = behaviour
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      const entry = { headers: req.headers, body, json: JSON.parse(body) }
      const n = received.length
      received.push(entry)
      behave(n, entry, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    behave: (b) => (behave = b),
    async until(predicate, ms = 10_000) {
      const deadline = Date.now() + ms
      while (!predicate(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `receiver: condition not met within ${ms} ms; got ${received.map((r) => r.json.type).join(', ')}`,
          )
        await new Promise((r) => setTimeout(r, 25))
      }
      return received
    },
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
