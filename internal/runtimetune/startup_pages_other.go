//go:build !linux

package runtimetune

import "github.com/kubeevents/kubeevents/internal/fastpath"

// ReleaseStartupPages is Linux only (it reads /proc/self/smaps).
func ReleaseStartupPages(fastpath.Runtime) {}
