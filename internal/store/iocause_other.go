//go:build !unix

package store

// ioCause guesses why writing path failed where SQLite says only "disk I/O error".
func ioCause(string) string { return "the disk may be full or failing" }
