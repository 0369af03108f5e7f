//go:build race

package clusterstore

// raceEnabled: the race detector makes encoding 10,000 pods twenty times slower.
const raceEnabled = true
