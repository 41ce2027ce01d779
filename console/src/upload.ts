import { createClient } from '@aigov/client'
import { useEffect, useState } from 'react'
import { api, call, csrfToken } from './api'

/**
 * A `fetch` for the client built on XMLHttpRequest, whose upload reports progress (fetch reports none). It
 * answers a Response like fetch does, so the client's errors, retries and case mapping stay as they are.
 */
export function progressFetch(onProgress: (sent: number, total: number) => void): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest()
      xhr.open(init.method ?? 'GET', typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
      xhr.withCredentials = init.credentials === 'include'
      xhr.responseType = 'blob'
      for (const [k, v] of new Headers(init.headers).entries()) xhr.setRequestHeader(k, v)
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) onProgress(e.loaded, e.total)
      }
      xhr.onload = () => {
        const headers = new Headers()
        for (const line of xhr
          .getAllResponseHeaders()
          .trim()
          .split(/[\r\n]+/)) {
          const at = line.indexOf(':')
          if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim())
        }
        const empty = xhr.status === 204 || xhr.status === 205 || xhr.status === 304
        resolve(
          new Response(empty ? null : (xhr.response as Blob), {
            status: xhr.status,
            statusText: xhr.statusText,
            headers,
          }),
        )
      }
      xhr.onerror = () => reject(new TypeError('the upload failed (network)'))
      xhr.onabort = () => reject(new DOMException('aborted', 'AbortError'))
      xhr.ontimeout = () => reject(new TypeError('the upload timed out'))
      init.signal?.addEventListener('abort', () => xhr.abort(), { once: true })
      xhr.send((init.body as XMLHttpRequestBodyInit | null | undefined) ?? null)
    })
}

/** Uploads a file as evidence through the project's client, reporting the share sent (0…1) as it goes. */
export function uploadEvidence(file: File, onProgress: (share: number) => void) {
  const client = createClient({
    baseUrl: window.location.origin,
    maxRetries: 0,
    // Large files on a slow line: the client's default 30 s would cut them off.
    timeoutMs: 30 * 60_000,
    session: { csrfToken },
    fetch: progressFetch((sent, total) => onProgress(total > 0 ? sent / total : 0)),
  })
  return call(client.evidence.upload(file, { title: file.name }))
}

/** The largest file one upload may carry (EVIDENCE_MAX_MB on the service), from GET /evidence/usage. */
let limit: Promise<number | undefined> | undefined
export function useUploadLimit(): number | undefined {
  const [bytes, setBytes] = useState<number | undefined>()
  useEffect(() => {
    limit ??= call(api.evidence.usage()).then((r) => r.data?.maxFileBytes)
    void limit.then(setBytes)
  }, [])
  return bytes
}
