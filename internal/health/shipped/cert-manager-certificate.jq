# cert-manager Certificate: an issuance that failed (the Issuing condition False with reason Failed, or status.lastFailureTime while no issuance is under way) is a failure, with when and how often; Ready True is Current.
# https://cert-manager.io/docs/reference/api-docs/#cert-manager.io/v1.CertificateStatus, https://cert-manager.io/docs/usage/certificate/
if .object.status.observedGeneration != null and .object.status.observedGeneration != .object.metadata.generation then null
elif any(.object.status.conditions[]?; .type == "Issuing" and .status == "False" and .reason == "Failed") then
  first(.object.status.conditions[] | select(.type == "Issuing")) | {status: "Failed", message: "issuing failed: \(.message)"}
elif .object.status.lastFailureTime != null and (any(.object.status.conditions[]?; .type == "Issuing" and .status == "True") | not) then
  {status: "Failed", message: "issuing failed at \(.object.status.lastFailureTime) (\(.object.status.failedIssuanceAttempts // 1) attempts in a row); cert-manager retries with a growing delay"}
elif any(.object.status.conditions[]?; .type == "Ready" and .status == "True") then
  {status: "Current", message: (first(.object.status.conditions[] | select(.type == "Ready")).message // "Certificate is up to date")}
else null end
