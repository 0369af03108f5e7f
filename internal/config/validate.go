package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/render"
)

// This file holds the checks shared by --sink flags and the config file. Their errors
// say what is wrong with a value; the callers add which setting it was and where.

// kindSet is a set of sink kinds, for which kinds a setting applies to.
type kindSet uint8

const (
	forTerminal kindSet = 1 << iota
	forFile
	forJQ
	forAll = forTerminal | forFile | forJQ
)

func kindBit(kind string) kindSet {
	switch kind {
	case KindTerminal:
		return forTerminal
	case KindFile:
		return forFile
	case KindJQ:
		return forJQ
	}
	return 0
}

// String lists the kinds, as "file" or "terminal or file".
func (k kindSet) String() string {
	var names []string
	for _, kind := range kinds {
		if k&kindBit(kind) != 0 {
			names = append(names, kind)
		}
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// setting is one sink setting, with its names in flags and in the config file.
type setting struct {
	flag  string // key in --sink OPTIONS; "" when only the TARGET sets it
	yaml  string // key in a config file sink; "" when it is under rotate
	kinds kindSet
	bool  bool // a flag option that may be given bare
}

// settings are the sink settings, in the order messages list them.
var settings = []setting{
	{flag: "name", yaml: "name", kinds: forAll},
	{yaml: "type", kinds: forAll},
	{flag: "format", yaml: "format", kinds: forTerminal | forFile},
	{yaml: "path", kinds: forFile},
	{yaml: "expr", kinds: forJQ},
	{flag: "buffer", yaml: "buffer", kinds: forAll},
	{flag: "on-full", yaml: "onFull", kinds: forAll},
	{flag: "resync", yaml: "resync", kinds: forAll},
	{flag: "raw", yaml: "raw", kinds: forJQ, bool: true},
	{flag: "output", yaml: "output", kinds: forJQ},
	{yaml: "rotate", kinds: forFile},
	{flag: "max-size", kinds: forFile},
	{flag: "max-backups", kinds: forFile},
	{flag: "max-age", kinds: forFile},
	{flag: "compress", kinds: forFile, bool: true},
}

// flagSetting returns the setting a --sink option key names.
func flagSetting(key string) (setting, bool) {
	for _, s := range settings {
		if s.flag != "" && s.flag == key {
			return s, true
		}
	}
	return setting{}, false
}

// yamlSetting returns the setting a config file sink key names.
func yamlSetting(key string) (setting, bool) {
	for _, s := range settings {
		if s.yaml != "" && s.yaml == key {
			return s, true
		}
	}
	return setting{}, false
}

// flagKeys lists the --sink option keys valid for kind.
func flagKeys(kind string) []string {
	var keys []string
	for _, s := range settings {
		if s.flag != "" && s.kinds&kindBit(kind) != 0 {
			keys = append(keys, s.flag)
		}
	}
	return keys
}

// yamlKeys lists every config file sink key.
func yamlKeys() []string {
	var keys []string
	for _, s := range settings {
		if s.yaml != "" {
			keys = append(keys, s.yaml)
		}
	}
	return keys
}

// fileFormats are the formats a file sink can be written in, the default first.
var fileFormats = []render.Format{render.FormatJSON, render.FormatPretty, render.FormatYAML}

// checkFormat checks a sink's format; "" is not checked.
func checkFormat(kind, format string) error {
	switch kind {
	case KindTerminal:
		_, err := render.ParseFormat(format)
		return err
	case KindFile:
		names := make([]string, len(fileFormats))
		for i, f := range fileFormats {
			if string(f) == format {
				return nil
			}
			names[i] = string(f)
		}
		if _, err := render.ParseFormat(format); err == nil {
			return fmt.Errorf("format %q is not available for file sinks; use one of: %s", format, strings.Join(names, ", "))
		}
		return fmt.Errorf("unknown output format %q; use one of: %s", format, strings.Join(names, ", "))
	}
	return fmt.Errorf("%s sinks take no format", kind)
}

func checkBuffer(n int) error {
	if n < 0 {
		return fmt.Errorf("must not be negative, got %d", n)
	}
	if n > MaxBuffer {
		return fmt.Errorf("must be at most %d, got %d", MaxBuffer, n)
	}
	return nil
}

// durationHint is appended to duration errors.
const durationHint = "use a number with a unit, e.g. 30s, 5m or 1h"

func parseResync(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q; %s", s, durationHint)
	}
	return d, checkResync(d)
}

func checkResync(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("must not be negative, got %s", d)
	case d > 0 && d < MinResync:
		return fmt.Errorf("%s is too short; use at least %s (client-go would raise it to that), or 0 for no resync", d, MinResync)
	}
	return nil
}

// errRotateNeedsSize is reported when rotation settings are given without a size, as
// rotation is off then and they would do nothing.
var errRotateNeedsSize = errors.New("needs a maximum size; rotation is off without one")
