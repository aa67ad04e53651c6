package plugin

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/obfuscate"
)

// The built-in kinds: History, Rate and Obfuscate.
func init() {
	Register("history", Kind[HistoryConfig]{New: newHistory})
	Register("rate", Kind[struct{}]{New: newRate})
	Register("obfuscate", Kind[ObfuscateConfig]{Check: checkObfuscate, New: newObfuscate})
}

func checkObfuscate(c ObfuscateConfig) error {
	if c.Bits < 1 || c.Bits > obfuscate.MaxBits || c.Key == "" {
		return fmt.Errorf("%w: obfuscate needs bits (1..%d) and key", idforge.ErrInvalidArgument, obfuscate.MaxBits)
	}
	return nil
}

// newHistory logs to the process log, or to File (JSON lines, appended).
func newHistory(c HistoryConfig, order int, env Env) (Plugin, io.Closer, error) {
	if c.File == "" {
		return NewHistory(env.Logger.With("plugin", "history"), order), nil, nil
	}
	file := c.File
	if !filepath.IsAbs(file) {
		file = filepath.Join(env.Dir, file)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, nil, err
	}
	return NewHistory(slog.New(slog.NewJSONHandler(f, nil)), order), f, nil
}

func newRate(_ struct{}, order int, env Env) (Plugin, io.Closer, error) {
	r, err := NewRate(env.Metrics, order)
	if err != nil {
		// Its metrics are registered already: by another rate plugin.
		return nil, nil, fmt.Errorf("%w: declared twice: %v", idforge.ErrInvalidArgument, err)
	}
	return r, nil, nil
}

func newObfuscate(c ObfuscateConfig, order int, env Env) (Plugin, io.Closer, error) {
	key, err := env.Secret(c.Key)
	if err != nil {
		return nil, nil, err
	}
	perm, err := obfuscate.New(key, c.Bits)
	if err != nil {
		return nil, nil, err
	}
	return NewObfuscate(perm, order), nil, nil
}
