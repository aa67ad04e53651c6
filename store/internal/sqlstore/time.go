package sqlstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// rowTime is an update_time column as scanned, in UTC. The servers'
// drivers return a time.Time; SQLite returns what the row holds, which a
// hand edit or an import may have made text of another form, or a number.
// NULL (possible only in a hand-made table) is the zero time.
type rowTime struct{ time.Time }

// Scan implements sql.Scanner.
func (t *rowTime) Scan(v any) error {
	var err error
	t.Time, err = parseTime(v)
	if err != nil {
		return fmt.Errorf("update_time: %w", err)
	}
	return nil
}

// timeLayouts are the text forms of update_time accepted, tried in order:
// SQLite's CURRENT_TIMESTAMP first, then what a hand edit or an import
// from MySQL or PostgreSQL may leave.
var timeLayouts = []string{
	time.DateTime,                   // CURRENT_TIMESTAMP: 2006-01-02 15:04:05
	"2006-01-02 15:04:05.999999999", // with fractional seconds
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07", // PostgreSQL timestamptz text
	time.RFC3339Nano,                   // 2006-01-02T15:04:05.999999999Z07:00
	"2006-01-02T15:04:05.999999999",    // ISO 8601 without zone
	time.DateOnly,
}

// parseTime converts an update_time value as a driver returns it. Text
// without a zone is UTC, which is what SQLite's CURRENT_TIMESTAMP writes;
// an integer is Unix seconds.
func parseTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v.UTC(), nil
	case int64:
		return time.Unix(v, 0).UTC(), nil
	case float64:
		sec := int64(v)
		return time.Unix(sec, int64((v-float64(sec))*1e9)).UTC(), nil
	case []byte:
		return parseTimeText(string(v))
	case string:
		return parseTimeText(v)
	}
	return time.Time{}, fmt.Errorf("unexpected value %v of type %T", v, v)
}

func parseTimeText(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q as a time", s)
}
