-- Argo CD health of the database.example.com kinds (MySQL, MySQLDatabase,
-- MySQLUser, MySQLGrant), by the same rules as
-- kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status), so that Argo CD,
-- Flux and `kubectl wait` never disagree:
--   being deleted                           -> Progressing (kstatus: Terminating)
--   status.observedGeneration != generation -> Progressing (InProgress)
--   Reconciling=True                        -> Progressing (InProgress)
--   Stalled=True                            -> Degraded    (Failed)
--   otherwise                               -> Healthy     (Current)
local hs = {}
if obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Resource scheduled for deletion"
  return hs
end
local status = obj.status or {}
if obj.metadata.generation ~= nil and status.observedGeneration ~= nil and status.observedGeneration ~= obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return hs
end
local ready = nil
for _, c in ipairs(status.conditions or {}) do
  if c.type == "Ready" then
    ready = c.message
  end
  if c.type == "Reconciling" and c.status == "True" then
    hs.status = "Progressing"
    hs.message = c.message or c.reason
    return hs
  end
  if c.type == "Stalled" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = c.message or c.reason
    return hs
  end
end
hs.status = "Healthy"
hs.message = status.message or ready or "Resource is current"
return hs
