import { Type } from 'typebox'
import { SERVICE_NAME } from '../../version.js'

export const API_VERSION = 'v1'

export const SystemInfo = Type.Object({
  service: Type.String({ examples: [SERVICE_NAME] }),
  version: Type.String({ examples: ['0.2.0'] }),
  api_version: Type.String({ examples: [API_VERSION] }),
  tenant: Type.String({ examples: ['default'] }),
  database: Type.Enum(['sqlite', 'postgres']),
  features: Type.Object({
    mcp: Type.Boolean(),
    mcp_read_only: Type.Boolean(),
    redis: Type.Boolean(),
    starter_library: Type.Boolean(),
    upstream: Type.Boolean(),
  }),
})

export const Ping = Type.Object({
  message: Type.Literal('pong'),
  tenant: Type.String(),
  key_id: Type.Union([Type.String(), Type.Null()]),
})
