package event

// HealthStatus is how an object is doing, in kstatus's words
// (sigs.k8s.io/cli-utils/pkg/kstatus/status), plus Unknown for an object whose health
// could not be told.
type HealthStatus string

const (
	HealthCurrent     HealthStatus = "Current"     // reconciled: what its spec asks for is there
	HealthInProgress  HealthStatus = "InProgress"  // being reconciled, not there yet
	HealthFailed      HealthStatus = "Failed"      // its controller gave up, or says it failed
	HealthTerminating HealthStatus = "Terminating" // being deleted (a deletionTimestamp)
	HealthNotFound    HealthStatus = "NotFound"    // gone: a DELETED event
	HealthUnknown     HealthStatus = "Unknown"     // its status could not be read
)

// Stalled is the type of the event the health step makes, without a change of its own,
// when an object has been InProgress for the run's stall time without progress (no
// change of its health's status or message): Object is its last state, Health says so.
const Stalled EventType = "STALLED"

// Health is an object's health at one event (package health): its status and message,
// and the status it had at its previous event ("" when this is the first seen).
type Health struct {
	Status   HealthStatus
	Message  string
	Previous HealthStatus
}

// Changed reports whether the status differs from the one at the previous event (the
// first one seen counts as a change).
func (h *Health) Changed() bool { return h != nil && h.Status != h.Previous }
