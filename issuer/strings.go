package issuer

import (
	"context"
	"fmt"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/obfuscate"
	"github.com/idforge/idforge/plugin"
)

// formatFor returns the format IDs of key are shown in: spec when given
// (a request's ?format=), else the key's configured format, else decimal.
// A spec given per request may not permute (the key is configuration);
// it may change the text form of a key whose format permutes, keeping
// the permutation.
func (i *Issuer) formatFor(key, spec string) (obfuscate.Format, error) {
	configured, ok := i.set.Formats[key]
	if spec == "" {
		return configured, nil
	}
	f, err := obfuscate.ParseFormat(spec)
	if err != nil {
		return obfuscate.Format{}, err
	}
	if f.Bits() > 0 {
		return obfuscate.Format{}, fmt.Errorf("%w: format %q: a permutation is configured per key, not asked for per request", idforge.ErrInvalidArgument, spec)
	}
	if ok && configured.Permute != nil {
		// The same text form behind the key's permutation.
		if f, err = obfuscate.ParseFormat(fmt.Sprintf("feistel:bits=%d+%s", configured.Bits(), spec)); err != nil {
			return obfuscate.Format{}, err
		}
		f.Permute = configured.Permute
		if err := f.Validate(); err != nil {
			return obfuscate.Format{}, err
		}
	}
	return f, nil
}

// NextStrings issues n IDs of key as strings: uuidv7, ulid and uuidv4
// keys as they come, integer keys in the key's format (or spec, a request's
// ?format=; see obfuscate.ParseFormat), decimal by default.
func (i *Issuer) NextStrings(ctx context.Context, key string, n int, spec string) ([]string, error) {
	if err := checkCount(n); err != nil {
		return nil, err
	}
	e, err := i.resolve(ctx, key)
	if err != nil {
		return nil, err
	}
	if e.str != nil {
		if spec != "" {
			return nil, fmt.Errorf("%w: key %q issues %s strings; formats are for keys of integer IDs", idforge.ErrWrongStrategy, key, e.strategy)
		}
		return i.manyStrings(ctx, key, e.strategy, n, func() ([]string, error) {
			if n == 1 {
				s, err := e.str.Next(ctx)
				if err != nil {
					return nil, err
				}
				return []string{s}, nil
			}
			return e.str.NextN(ctx, n)
		})
	}
	f, err := i.formatFor(key, spec)
	if err != nil {
		return nil, err
	}
	// The IDs come permuted already (see many): only the text stage is
	// left to apply.
	f = f.Text()
	if spec != "" {
		ctx = context.WithValue(ctx, formatKey{}, spec)
	}
	var ids []int64
	if n == 1 {
		var id int64
		id, err = i.one(ctx, key, e)
		ids = []int64{id}
	} else {
		ids, err = i.NextN(ctx, key, n)
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ids))
	for k, id := range ids {
		if out[k], err = f.Encode(id); err != nil {
			return nil, fmt.Errorf("key %q: ID %d does not fit its format %s: %w", key, id, f, err)
		}
	}
	return out, nil
}

// manyStrings draws string IDs (uuidv7, ulid, uuidv4, serials), through the
// plugins when there are any.
func (i *Issuer) manyStrings(ctx context.Context, key string, strategy idforge.Strategy, n int, draw func() ([]string, error)) ([]string, error) {
	if i.set.Plugins.Idle() {
		return draw()
	}
	return i.set.Plugins.RunStrings(ctx, plugin.Call{Key: key, Strategy: strategy, Count: n}, draw)
}

// TakeStrings is Take (nothing buffered: a segment key claims exactly n)
// with the results as NextStrings gives them, for one-shot processes.
func (i *Issuer) TakeStrings(ctx context.Context, key string, n int) ([]string, error) {
	e, err := i.resolve(ctx, key)
	if err != nil {
		return nil, err
	}
	if e.str != nil {
		return i.NextStrings(ctx, key, n, "")
	}
	ids, err := i.Take(ctx, key, n)
	if err != nil {
		return nil, err
	}
	f, err := i.formatFor(key, "")
	if err != nil {
		return nil, err
	}
	f = f.Text() // Take permuted the IDs already
	out := make([]string, len(ids))
	for k, id := range ids {
		if out[k], err = f.Encode(id); err != nil {
			return nil, fmt.Errorf("key %q: ID %d does not fit its format %s: %w", key, id, f, err)
		}
	}
	return out, nil
}

// Decode turns a string ID of key back into its integer, with the key's
// format (or spec). It checks the form, not that the ID was ever issued.
// Like every call on a key, it answers an error wrapping
// idforge.ErrUnknownKey for a key that does not exist, and one wrapping
// idforge.ErrWrongStrategy for a key of strings (uuidv7, ulid, uuidv4),
// whose IDs have nothing to decode.
func (i *Issuer) Decode(ctx context.Context, key, s, spec string) (int64, error) {
	strategy, err := i.strategyOf(ctx, key)
	if err != nil {
		return 0, err
	}
	if strategy.IssuesStrings() {
		return 0, fmt.Errorf("%w: key %q issues %s strings; only keys of integer IDs have a format to decode", idforge.ErrWrongStrategy, key, strategy)
	}
	f, err := i.formatFor(key, spec)
	if err != nil {
		return 0, err
	}
	id, err := f.Decode(s)
	if err != nil {
		return 0, err
	}
	return id, nil
}

// strategyOf returns the strategy of key, asking the store only for a key
// this node has not set up; unlike resolve it needs no generator, so a
// node without a snowflake generator still decodes a snowflake key's IDs.
func (i *Issuer) strategyOf(ctx context.Context, key string) (idforge.Strategy, error) {
	if e, ok := i.lookup(key); ok {
		return e.strategy, nil
	}
	if err := idforge.ValidateKeyName(key); err != nil {
		return "", err
	}
	k, err := i.store.Key(ctx, key)
	if err != nil {
		return "", storeErr(err)
	}
	return k.Strategy, nil
}

// Format returns the configured format of key, as a spec ("" = decimal).
func (i *Issuer) Format(key string) string {
	if f, ok := i.set.Formats[key]; ok {
		return f.String()
	}
	return ""
}
