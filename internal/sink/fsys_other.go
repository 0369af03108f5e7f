//go:build !linux

package sink

// virtualFileSystem is "" where file systems are not told apart: messages then say that
// the directory does not allow creating files, without naming why.
func virtualFileSystem(string) string { return "" }
