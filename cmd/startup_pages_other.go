//go:build !linux

package cmd

// releaseStartupPages is Linux only (it reads /proc/self/smaps).
func releaseStartupPages() {}
