//go:build tools

// Package helm pins the helm that hack/helm.sh builds for the chart's checks (helm lint,
// helm template, helm install on the local cluster): built from its Go module at the
// version go.mod names, never downloaded as a binary. Nothing imports this package.
package helm

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
