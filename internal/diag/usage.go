package diag

import "fmt"

// UsageError is bad input from the command line or the config file, found before or
// while connecting: the run does nothing, and the command exits 2. Its message is one
// line that names what was wrong and what to do.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Usage marks err as bad input.
func Usage(err error) error { return &UsageError{Err: err} }

// Plural is "s" unless n is 1: "1 event", "2 events".
func Plural[N ~int | ~int64 | ~uint64](n N) string {
	if n == 1 {
		return ""
	}
	return "s"
}
