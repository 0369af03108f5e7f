//go:build !race

package clusterstore

const raceEnabled = false
