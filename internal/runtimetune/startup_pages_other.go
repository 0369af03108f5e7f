//go:build !linux

package runtimetune

// ReleaseStartupPages is Linux only (it reads /proc/self/smaps).
func ReleaseStartupPages() {}
