// The ceiling: a bare node:http server answering every request with the exact bytes (and content type) of
// the list endpoint's response, each as soon as it is parsed. A service that answers the requests of one turn of
// its event loop together (the SQLite read cache does) can beat it: the load generator then reads many answers
// per wakeup. Ratios above 100 % are real, and the ceiling stays the same-run reference of every ratio.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const [bodyFile, port] = process.argv.slice(2)
const body = readFileSync(bodyFile)
createServer((req, res) => {
  req.resume()
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length })
  res.end(body)
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'))
