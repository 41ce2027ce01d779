import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../../dist/service/aigov.js', import.meta.url))

/** Runs the built CLI to completion. */
export function runCli(args: string[], env: Record<string, string>) {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  })
  return { code: res.status, stdout: res.stdout, stderr: res.stderr }
}

/**
 * Runs the built CLI to completion without blocking this process: a test's in-process service may hold a lock the
 * CLI waits for (a group transaction, the tenant's chain head), and it can only let go while the event loop runs.
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

export interface ServiceProcess {
  child: ChildProcess
  baseUrl: string
  port: number
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts `aigov serve` as a real process (with extra Node options, e.g. `npm start`'s heap cap) and waits until /livez answers. */
export async function startServiceProcess(
  env: Record<string, string>,
  port?: number,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  const listenPort = port ?? (await freePort())
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve'], {
    env: {
      PATH: process.env.PATH,
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: String(listenPort),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const baseUrl = `http://127.0.0.1:${listenPort}`
  const deadline = Date.now() + 20_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}: ${output}`)
    try {
      if ((await fetch(`${baseUrl}/livez`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`service did not start: ${output}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    child,
    baseUrl,
    port: listenPort,
    output: () => output,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        // A process killed by a signal has signalCode set and exitCode null: it will not emit 'exit' again.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
        child.once('exit', (code) => resolve(code))
        child.kill(signal)
      }),
  }
}
