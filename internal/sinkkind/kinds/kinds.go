// Package kinds registers the sink kinds, in the order messages, completion and the docs
// list them: a new kind is its own package and one line here. Import it for its effect.
package kinds

import (
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/execsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/filesink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/httpsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/jqsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/storesink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
)

func init() {
	sinkkind.Register(terminalsink.Kind)
	sinkkind.Register(filesink.Kind)
	sinkkind.Register(jqsink.Kind)
	sinkkind.Register(execsink.Kind)
	sinkkind.Register(httpsink.Kind)
	sinkkind.Register(storesink.Kind)
}
