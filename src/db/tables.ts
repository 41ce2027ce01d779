import type { Generated } from 'kysely'

/** Row types of every table. Timestamps are RFC 3339 UTC strings, arrays and objects JSON text, booleans 0/1. */
export interface Tables {
  tenants: TenantRow
  settings: SettingRow
  api_keys: ApiKeyRow
  use_cases: UseCaseRow
  audit_logs: AuditLogRow
  idempotency_records: IdempotencyRow
  webhook_endpoints: WebhookEndpointRow
  webhook_deliveries: WebhookDeliveryRow
  models: ModelRow
  vendors: VendorRow
  risk_types: RiskTypeRow
  risk_scenarios: RiskScenarioRow
  workflow_stages: WorkflowStageRow
  use_case_models: LinkRow & { use_case_id: string; model_id: string }
  use_case_vendors: LinkRow & { use_case_id: string; vendor_id: string }
  model_vendors: LinkRow & { model_id: string; vendor_id: string }
  risk_scenario_risk_types: LinkRow & { risk_scenario_id: string; risk_type_id: string }
  use_case_risk_scenarios: LinkRow & {
    use_case_id: string
    risk_scenario_id: string
    likelihood: number | null
    impact: number | null
  }
  policy_control_bases: PolicyControlBaseRow
  policy_control_versions: PolicyControlVersionRow
  policy_packs: PolicyPackRow
  policy_pack_controls: PolicyPackControlRow
  use_case_policy_packs: UseCasePolicyPackRow
  use_case_controls: UseCaseControlRow
  questionnaires: QuestionnaireRow
  use_case_questionnaires: AttachmentRow & { use_case_id: string }
  model_questionnaires: AttachmentRow & { model_id: string }
  vendor_questionnaires: AttachmentRow & { vendor_id: string }
  users: UserRow
  teams: TeamRow
  team_members: LinkRow & { team_id: string; user_id: string }
  custom_fields: CustomFieldRow
  custom_field_values: CustomFieldValueRow
  evidence_blobs: EvidenceBlobRow
  evidence_chunks: EvidenceChunkRow
  evidence: EvidenceRow
  use_case_control_evidence: ControlEvidenceRow
  evidence_usage: EvidenceUsageRow
  audit_legacy_proofs: AuditLegacyProofRow
  sessions: SessionRow
  login_links: LoginLinkRow
  sso_configs: SsoConfigRow
  oidc_logins: OidcLoginRow
  oauth_records: OauthRecordRow
}

/** A tenant's stored evidence bytes (every chunk, finished or still arriving), kept in the transactions that change them. */
export interface EvidenceUsageRow {
  tenant_id: string
  bytes: number
}

/**
 * Up to which sequence a tenant's audit chain may hold unkeyed (pre-HMAC) records, null for none, under a MAC with
 * the chain key (`key_id`) that a database writer cannot compute. `mac` is null only between the migration that
 * recorded the legacy sequence and the sealing that follows it in the same start.
 */
export interface AuditLegacyProofRow {
  tenant_id: string
  legacy_seq: number | null
  key_id: string | null
  mac: string | null
}

export interface AttachmentRow extends LinkRow {
  questionnaire_key: string
  questionnaire_id: string
  /** JSON object: question id → stored answer. */
  answers: string
  /** Required questions without an answer, written with the answers (0: complete). */
  missing_required: number
}

export interface EvidenceBlobRow {
  id: string
  tenant_id: string
  /** Null while the upload is still arriving. */
  sha256: string | null
  /** The bytes stored so far (every chunk, also while the upload is still arriving). */
  size: number
  chunk_size: number
  chunks: number
  created_at: string
}

export interface EvidenceChunkRow {
  tenant_id: string
  blob_id: string
  seq: number
  data: Buffer
}

export interface EvidenceRow {
  id: string
  tenant_id: string
  kind: string
  title: string | null
  /** Lower-cased title, file name and URL: what `q` searches. */
  search_key: string
  url: string | null
  file_name: string | null
  content_type: string | null
  size: number | null
  sha256: string | null
  blob_id: string | null
  created_by: string | null
  created_at: string
  updated_at: string
}

export interface ControlEvidenceRow {
  tenant_id: string
  use_case_id: string
  use_case_control_id: string
  evidence_id: string
  requirement: number | null
  created_at: string
}

export interface TenantRow {
  id: string
  created_at: string
  audit_seq: number
  audit_head: string
  /** SQLite: the tenant's audit records up to this seq are in its name index (audit-name-search.ts). */
  audit_names_seq: Generated<number>
}

export interface SettingRow {
  key: string
  value: string
}

export interface ApiKeyRow {
  id: string
  tenant_id: string
  name: string
  role: string
  key_hash: string
  key_prefix: string
  created_at: string
  updated_at: string
  expires_at: string | null
  revoked_at: string | null
}

export interface UseCaseRow {
  id: string
  tenant_id: string
  name: string
  name_key: string
  description: string | null
  ai_type: string | null
  system_type: string | null
  risk_category_level: string | null
  regions: string
  industries: string
  source: string | null
  owner_id: string | null
  owner_type: string | null
  workflow_stage_id: string | null
  workflow_stage_step: string | null
  /** Set while workflow_stage_step is `rejected`. */
  workflow_rejection_reason: string | null
  creator_id: string | null
  created_at: string
  updated_at: string
}

export interface AuditLogRow {
  id: string
  tenant_id: string
  seq: number
  created_at: string
  action: string
  resource_type: string
  resource_id: string | null
  resource_name: string | null
  sub_object_type: string | null
  sub_object_id: string | null
  sub_object_name: string | null
  use_case_id: string | null
  actor_type: string
  actor_id: string | null
  actor_name: string | null
  source: string
  request_id: string | null
  changes: string | null
  metadata: string | null
  prev_hash: string
  hash: string
  /** The chain key the hash is an HMAC under; null: a record from before the chain was keyed (plain SHA-256). */
  chain_key_id: string | null
}

interface NamedRow {
  id: string
  tenant_id: string
  name: string
  /** NFC, trimmed, lower-cased name: what uniqueness and `q` search use. */
  name_key: string
  created_at: string
  updated_at: string
}

/** A record with an accountable owner: a user or a team. */
interface OwnedRow {
  owner_id: string | null
  owner_type: string | null
}

export interface ModelRow extends NamedRow, OwnedRow {
  summary: string | null
  source: string | null
  status: string
  provider: string | null
  model_type: string | null
  version: string | null
}

export interface VendorRow extends NamedRow, OwnedRow {
  description: string | null
  website: string | null
  status: string
}

export interface RiskTypeRow extends NamedRow {
  description: string | null
  custom: number
  hidden: number
}

export interface RiskScenarioRow extends NamedRow {
  description: string | null
  domains: string
  industries: string
  regions: string
  archived: number
}

export interface WorkflowStageRow extends NamedRow {
  description: string | null
  type: string
  position: number
  assessment_required: number
  evidence_collection_required: number
}

export interface LinkRow {
  tenant_id: string
  created_at: string
}

export interface IdempotencyRow {
  /** tenant, API key and Idempotency-Key together */
  id: string
  fingerprint: string
  state: 'pending' | 'done'
  /** The stored response as JSON: status, headers, body */
  response: string | null
  expires_at: string
}

export interface PolicyControlBaseRow {
  id: string
  tenant_id: string
  key: string
  name: string
  name_key: string
  archived: number
  deprecated: number
  /** The highest published version number, kept in step by publish. */
  latest_version: number | null
  created_at: string
  updated_at: string
}

export interface PolicyControlVersionRow {
  id: string
  tenant_id: string
  base_id: string
  key: string
  version: number
  status: string
  name: string
  name_key: string
  description: string | null
  evidence_requirements: string
  risk_type_ids: string
  published_at: string | null
  created_at: string
  updated_at: string
}

export interface PolicyPackRow {
  id: string
  tenant_id: string
  key: string
  version: number
  /** 1 on the newest version of its key. */
  latest: number
  name: string
  name_key: string
  description: string | null
  created_at: string
  updated_at: string
}

export interface PolicyPackControlRow {
  tenant_id: string
  policy_pack_id: string
  position: number
  control_key: string
  control_version: number
  control_version_id: string
}

export interface UseCasePolicyPackRow {
  tenant_id: string
  use_case_id: string
  policy_pack_key: string
  policy_pack_id: string
  due_date: string | null
  created_at: string
}

export interface UseCaseControlRow {
  id: string
  tenant_id: string
  use_case_id: string
  control_key: string
  control_version: number
  control_version_id: string
  name: string
  policy_pack_key: string
  policy_pack_version: number
  status: string
  due_date: string | null
  notes: string | null
  assignee_id: string | null
  assignee_type: string | null
  created_at: string
  updated_at: string
}

export interface QuestionnaireRow {
  id: string
  tenant_id: string
  key: string
  version: number
  latest: number
  name: string
  name_key: string
  description: string | null
  target: string
  sections: string
  created_at: string
  updated_at: string
}

export interface UserRow {
  id: string
  tenant_id: string
  email: string
  /** Trimmed, lower-cased email: what uniqueness and `email=` use. */
  email_key: string
  name: string | null
  name_key: string | null
  title: string | null
  active: number
  /** read, write or admin: what the person may do when signed in. */
  role: string
  created_at: string
  updated_at: string
}

/** A person's sign-in: the cookie holds a random secret, the row only its SHA-256. */
export interface SessionRow {
  id: string
  tenant_id: string
  user_id: string
  token_hash: string
  /** How the person signed in: link or oidc. */
  method: string
  address: string | null
  user_agent: string | null
  created_at: string
  /** Last request, written at most once a minute: the idle timeout counts from it. */
  last_seen_at: string
  /** The absolute end (SESSION_MAX_DAYS after sign-in). */
  expires_at: string
}

/** A one-time sign-in link: only the hash of its token, usable once before expires_at. */
export interface LoginLinkRow {
  token_hash: string
  tenant_id: string
  user_id: string
  created_at: string
  expires_at: string
  used_at: string | null
}

/** A tenant's identity provider for single sign-on. */
export interface SsoConfigRow {
  tenant_id: string
  issuer: string
  client_id: string
  /** Encrypted (see webhook-secrets.ts) */
  client_secret: string
  /** JSON list of lower-cased domains */
  email_domains: string
  provision: number
  created_at: string
  updated_at: string
}

/** A sign-in started at the identity provider: keyed by the hash of its state, bound to the browser's cookie by hash. */
export interface OidcLoginRow {
  state_hash: string
  tenant_id: string
  browser_hash: string
  nonce: string
  return_to: string
  created_at: string
  expires_at: string
  used_at: string | null
}

/** One record of the authorization server of /mcp (client, grant, code, token, interaction…), as oidc-provider keeps it. */
export interface OauthRecordRow {
  kind: string
  id: string
  /** The provider's JSON payload. */
  payload: string
  expires_at: string | null
  grant_id: string | null
  uid: string | null
  user_code: string | null
}

export interface WebhookEndpointRow {
  id: string
  tenant_id: string
  url: string
  description: string | null
  /** JSON list of action patterns */
  events: string
  enabled: number
  /** The signing secret, encrypted (see webhook-secrets.ts) */
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: string | null
  /** The tenant's audit sequence number up to which records have been turned into deliveries */
  cursor_seq: number
  failing_since: string | null
  disabled_reason: string | null
  created_at: string
  updated_at: string
}

export interface TeamRow extends NamedRow {
  description: string | null
}

export interface CustomFieldRow extends NamedRow {
  description: string | null
  type: string
  element_type: string
  options: string
  multiple: number
  required: number
  entity_types: string
  archived: number
  /** JSON object as the client sent it, or null. */
  metadata: string | null
}

export interface CustomFieldValueRow {
  tenant_id: string
  custom_field_id: string
  entity_type: string
  entity_id: string
  position: number
  /** The value as JSON. */
  value: string
  /** Its canonical text, which find-by-value compares. */
  value_key: string
}

export interface WebhookDeliveryRow {
  id: string
  tenant_id: string
  endpoint_id: string
  /** The audit record delivered; null for a ping */
  audit_id: string | null
  event_type: string
  /** The event body of a ping (audit events are built from the record when sent) */
  payload: string | null
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  last_status_code: number | null
  last_error: string | null
  last_attempt_at: string | null
  next_attempt_at: string | null
  lease_until: string | null
  created_at: string
  updated_at: string
}
