import dgram from 'node:dgram'
import { createServer, type Socket } from 'node:net'
import dnsPacket from 'dns-packet'

export interface DnsQuery {
  name: string
  type: string
  at: number
}

export interface DnsServer {
  /** `127.0.0.1:port`, as WEBHOOK_DNS_SERVERS takes it. */
  address: string
  /** Every question received, over UDP and TCP. */
  queries: DnsQuery[]
  close(): Promise<void>
}

/**
 * A real DNS server on 127.0.0.1 (UDP, and TCP on the same port). A name in `records` gets its A records with
 * their TTL and no AAAA; a name `hang(name)` holds is never answered (the query is read and dropped, a TCP
 * connection is accepted and left open); any other name is NXDOMAIN.
 */
export async function startDnsServer(
  options: { records?: Record<string, { address: string; ttl: number }[]>; hang?: (name: string) => boolean } = {},
): Promise<DnsServer> {
  const queries: DnsQuery[] = []
  const answer = (udp: dgram.Socket) => (message: Buffer, from: dgram.RemoteInfo) => {
    let query: dnsPacket.Packet
    try {
      query = dnsPacket.decode(message)
    } catch {
      return
    }
    const question = query.questions?.[0]
    if (!question) return
    const name = question.name.toLowerCase()
    queries.push({ name, type: question.type, at: Date.now() })
    if (options.hang?.(name)) return
    const records = options.records?.[name]
    const answers =
      records && question.type === 'A'
        ? records.map((r) => ({ type: 'A' as const, name: question.name, ttl: r.ttl, data: r.address }))
        : []
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags:
        dnsPacket.AUTHORITATIVE_ANSWER |
        ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
        (records ? 0 : 3) /* NXDOMAIN */,
      questions: [question],
      answers,
    })
    udp.send(response, from.port, from.address)
  }
  const sockets = new Set<Socket>()
  const tcp = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    // Read and never answer: a hanging server over TCP too.
    socket.resume()
  })
  // The UDP port the system picks may be taken over TCP: then another.
  let udp: dgram.Socket | undefined
  let port = 0
  for (let attempt = 0; udp === undefined; attempt++) {
    const socket = dgram.createSocket('udp4')
    socket.on('message', answer(socket))
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
    port = socket.address().port
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject)
        tcp.listen(port, '127.0.0.1', () => {
          tcp.off('error', reject)
          resolve()
        })
      })
      udp = socket
    } catch (err) {
      await new Promise<void>((resolve) => socket.close(() => resolve()))
      if (attempt >= 10) throw err
    }
  }
  const bound = udp
  return {
    address: `127.0.0.1:${port}`,
    queries,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => tcp.close(() => resolve()))
      await new Promise<void>((resolve) => bound.close(() => resolve()))
    },
  }
}
