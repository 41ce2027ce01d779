import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { parentPort, workerData } from 'node:worker_threads'
import type { ResolvedAddress } from './webhook-dns.js'
import type { Answer, Exchange, Send, ToThread } from './webhook-sender.js'
import { signatureHeader } from './webhook-signature.js'

// The sending thread (started by WebhookSender): it holds the connections (kept alive, redirects never followed:
// http.request does not follow them), times each exchange out and drains the answer. It never looks a name up: a
// new connection goes to the addresses the service resolved and checked for this send (pinned, so a DNS answer
// changing between the check and the connection cannot reach another address); a kept one was checked when opened.

const port = parentPort!
const { timeoutMs } = workerData as { timeoutMs: number }

// No lookup of their own: an agent's options override the request's, and each request brings its pinned one.
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) }

const pinned =
  (addresses: ResolvedAddress[]): LookupFunction =>
  (hostname, options, callback) => {
    const usable =
      options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
    if (usable.length === 0) {
      const err = Object.assign(new Error(`no checked address of ${hostname} to connect to`), { code: 'ENOTFOUND' })
      callback(err, '', 4)
    } else if (options.all) (callback as (err: null, addresses: ResolvedAddress[]) => void)(null, usable)
    else callback(null, usable[0].address, usable[0].family)
  }

const requests = new Set<http.ClientRequest>()
const answers: Answer[] = []

// Answers go back in one message per turn of the loop.
const answer = (id: number, exchange: Exchange): void => {
  if (answers.push([id, exchange]) === 1) setImmediate(() => port.postMessage({ answers: answers.splice(0) }))
}

const describe = (err: NodeJS.ErrnoException): string =>
  err.code && err.code !== 'EBLOCKEDTARGET' ? `${err.code}: ${err.message}` : err.message

const send = ([id, url, headers, body, secrets, addresses]: Send): void => {
  if (secrets.length > 0)
    headers['webhook-signature'] = signatureHeader(headers['webhook-id'], headers['webhook-timestamp'], body, secrets)
  const target = new URL(url)
  let timedOut = false
  const done = (exchange: Exchange): void => {
    clearTimeout(timer)
    requests.delete(req)
    answer(id, exchange)
  }
  const failure = (err: NodeJS.ErrnoException): string =>
    timedOut ? `no answer within ${timeoutMs / 1000} s` : describe(err)
  const client = target.protocol === 'https:' ? https : http
  const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:']
  const req = client.request(target, { method: 'POST', headers, agent, lookup: pinned(addresses) }, (res) => {
    res.resume()
    res.on('end', () => done({ status: res.statusCode, retryAfter: res.headers['retry-after'] }))
    res.on('error', (err) => done({ status: res.statusCode, error: failure(err) }))
  })
  const timer = setTimeout(() => {
    timedOut = true
    req.destroy()
  }, timeoutMs)
  requests.add(req)
  req.on('error', (err) => done({ error: failure(err) }))
  req.end(body)
}

port.on('message', (message: ToThread) => {
  if ('sends' in message) for (const s of message.sends) send(s)
  else {
    for (const req of requests) req.destroy()
    agents['http:'].destroy()
    agents['https:'].destroy()
    port.close()
  }
})
