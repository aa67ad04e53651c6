package mongo

import (
	"context"
	"fmt"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store/internal/claim"
)

// serialDoc is a document of SerialsCollection.
type serialDoc struct {
	Name        string    `bson:"_id"`
	Template    string    `bson:"template"`
	TimeZone    string    `bson:"time_zone,omitempty"`
	Description string    `bson:"description,omitempty"`
	Updated     time.Time `bson:"update_time"`
}

// get is the definition the document holds; it never fails.
func (d *serialDoc) get() (idforge.Serial, error) {
	return idforge.Serial{Name: d.Name, Template: d.Template, TimeZone: d.TimeZone, Description: d.Description, Updated: d.Updated.UTC()}, nil
}

// CreateSerial implements idforge.SerialStore: it inserts the
// definition's document, its name as _id (MongoDB's unique _id index
// decides between creators in any number of processes). Serial names are
// a namespace of their own: a key of the same name does not take one.
//
// Errors: those of idforge.Serial.Validate; ErrKeyExists when a serial of
// that name exists; an error saying to run `idforge migrate` on a
// database without idforge's collections; ErrClosed after Close.
func (s *Store) CreateSerial(ctx context.Context, def idforge.Serial) error {
	if err := s.life.CheckOpen(); err != nil {
		return err
	}
	if err := def.Validate(); err != nil {
		return err
	}
	doc := serialDoc{Name: def.Name, Template: def.Template, TimeZone: def.TimeZone, Description: def.Description,
		Updated: time.Now().UTC()}
	return s.insert(ctx, s.serials, doc, fmt.Errorf("%w: %s", idforge.ErrKeyExists, claim.SerialName(def.Name)), "create "+claim.SerialName(def.Name))
}

// Serial implements idforge.SerialStore. It returns an error wrapping
// idforge.ErrUnknownKey when there is no serial of that name, and
// ErrClosed after Close.
func (s *Store) Serial(ctx context.Context, name string) (idforge.Serial, error) {
	return findOne(ctx, s, s.serials, name, fmt.Errorf("%w: %s", idforge.ErrUnknownKey, claim.SerialName(name)), "read "+claim.SerialName(name), (*serialDoc).get)
}

// Serials implements idforge.SerialStore: every serial definition, sorted
// by name in byte order. Its errors are Serial's, but for ErrUnknownKey.
func (s *Store) Serials(ctx context.Context) ([]idforge.Serial, error) {
	return list(ctx, s, s.serials, "list serials", (*serialDoc).get)
}
