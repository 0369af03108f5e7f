package event

// Owner is one link of an owner chain: an object that owns, directly or through others,
// the object an event is about (metadata.ownerReferences).
type Owner struct {
	Kind string
	Name string
}

// RolloutState is where a rollout stands, as `kubectl rollout status` decides it.
type RolloutState string

const (
	RolloutProgressing RolloutState = "progressing"
	RolloutComplete    RolloutState = "complete"
	RolloutFailed      RolloutState = "failed"
	// RolloutDeleted is the state an owner's DELETED event gives: its rollout can no
	// longer complete.
	RolloutDeleted RolloutState = "deleted"
)

// Rollout is the state of an owner's rollout at one event, with kubectl's message
// ("Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...").
type Rollout struct {
	State   RolloutState
	Message string
}

// Done reports whether the rollout ended, one way or the other.
func (r *Rollout) Done() bool {
	return r != nil && (r.State == RolloutComplete || r.State == RolloutFailed || r.State == RolloutDeleted)
}
