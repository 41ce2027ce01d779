import type { FastifyReply, FastifyRequest } from 'fastify'

/** 201 with the new record and its Location. */
export function created<T extends { id: string }>(
  req: FastifyRequest,
  reply: FastifyReply,
  record: T,
  path = `${req.url.split('?')[0]}/${record.id}`,
): T {
  reply.code(201).header('Location', path)
  return record
}

/** 204 once `work` (a delete, a removal) is done. */
export async function noContent(reply: FastifyReply, work: Promise<void>): Promise<FastifyReply> {
  await work
  return reply.code(204).send(null)
}

/** A 200 whose JSON the database rendered (see item-json.ts): its bytes sent as they are, past the response serializer. */
export function jsonText(reply: FastifyReply, body: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body)
}
