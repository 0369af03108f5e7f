//go:build tools

// Package tools pins the programs hack/cluster.sh builds: a real kube-apiserver, kubectl
// and etcd, at the versions go.mod names. Nothing imports this package.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
