// The ceiling: a bare node:http server answering every request with the exact bytes (and content type) of
// the list endpoint's response. Nothing a Node service does per request can beat it on this machine.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const [bodyFile, port] = process.argv.slice(2)
const body = readFileSync(bodyFile)
createServer((req, res) => {
  req.resume()
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length })
  res.end(body)
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'))
