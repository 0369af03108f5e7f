// Package e2e runs the real kubeevents binary, as a user would, against the real local
// local cluster that hack/cluster.sh starts (make test-e2e brings it up and passes its
// kubeconfig in KUBEEVENTS_KUBECONFIG). Each test works in a fresh namespace of its own.
// The cluster is living (controllers, a scheduler, kwok's simulated nodes): tests of
// kubeevents' own mechanics use pods that are never scheduled (pod), so that only the
// test changes them; living_test.go follows what the controllers and nodes do.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	kubeconfig string // the local cluster's kubeconfig
	clusterBin string // directory with kubectl (and kube-apiserver, etcd)
	binary     string // the kubeevents binary under test
	client     *kubernetes.Clientset
	restConfig *rest.Config
	repoRoot   string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	kubeconfig = os.Getenv("KUBEEVENTS_KUBECONFIG")
	clusterBin = os.Getenv("KUBEEVENTS_CLUSTER_BIN")
	if kubeconfig == "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "e2e: KUBEEVENTS_KUBECONFIG is not set under CI=true; run the tests with 'make test-e2e', which starts the local cluster")
			return 1
		}
		fmt.Fprintln(os.Stderr, "e2e: no local cluster (KUBEEVENTS_KUBECONFIG unset); skipping. Run 'make test-e2e'.")
		return 0
	}
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	var err error
	if restConfig, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: kubeconfig:", err)
		return 1
	}
	restConfig.QPS, restConfig.Burst = 200, 400
	if client, err = kubernetes.NewForConfig(restConfig); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kubeevents-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "kubeevents")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building kubeevents:", err)
		return 1
	}
	return m.Run()
}
