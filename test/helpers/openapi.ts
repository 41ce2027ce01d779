/**
 * The document with every `#/components/schemas/…` reference replaced by the schema it names, for tests that
 * generate and check values operation by operation (the component schemas are not recursive).
 */
export function dereference<T>(doc: T): T {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {}
  const resolved = new Map<string, unknown>()
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk)
    if (!node || typeof node !== 'object') return node
    const ref = (node as { $ref?: unknown }).$ref
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length)
      if (!(name in schemas)) throw new Error(`dangling reference ${ref}`)
      if (!resolved.has(name)) resolved.set(name, walk(schemas[name]))
      const { $ref: _ref, ...siblings } = node as Record<string, unknown>
      return { ...(resolved.get(name) as object), ...siblings }
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value)]))
  }
  return { ...doc, paths: walk((doc as { paths: unknown }).paths) } as T
}
