// The webhook receiver of `npm run bench`, in a process of its own so that it does not compete with the load
// generator for one event loop. Answers 204 to every POST and measures the delivery lag (receipt minus the
// event's created_at) of the bench tenant's use_case.created events. Over IPC: 'reset' clears the figures,
// 'stats' answers {received, lags (sorted), unique, duplicates}.
import { createServer } from 'node:http'

let received = 0
let lags = []
let seen = new Set()
let duplicates = 0
const server = createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk) => (body += chunk))
  req.on('end', () => {
    received++
    const event = JSON.parse(body)
    if (event.type === 'use_case.created' && event.tenant === 'bench') {
      if (seen.has(event.id)) duplicates++
      else {
        seen.add(event.id)
        lags.push(Date.now() - Date.parse(event.created_at))
      }
    }
    res.writeHead(204).end()
  })
})
process.on('message', (message) => {
  if (message === 'reset') {
    lags = []
    seen = new Set()
    duplicates = 0
    process.send({ reset: true })
  } else if (message === 'stats') {
    process.send({ received, lags: lags.sort((a, b) => a - b), unique: seen.size, duplicates })
  }
})
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
