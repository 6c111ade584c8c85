package v1

import "time"

// endOfLife are the dates the vendors end support of the versions a MySQL
// may run, where that date is known; a version not listed is supported.
var endOfLife = map[Engine]map[string]time.Time{
	EngineMySQL: {
		"5.7": time.Date(2023, 10, 31, 0, 0, 0, 0, time.UTC),
		"8.0": time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC),
	},
	EngineMariaDB: {
		"10.11": time.Date(2028, 2, 16, 0, 0, 0, 0, time.UTC),
		"11.4":  time.Date(2029, 5, 29, 0, 0, 0, 0, time.UTC),
	},
}

// EndOfLife returns the day the vendor ended, or ends, support of version
// of engine, and whether that day is known.
func EndOfLife(engine Engine, version string) (time.Time, bool) {
	if engine == "" {
		engine = EngineMySQL
	}
	t, ok := endOfLife[engine][version]
	return t, ok
}
