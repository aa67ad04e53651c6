package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/store"
	"github.com/idforge/idforge/store/internal/claim"
)

// defDoc is a document of DefinitionsCollection. Its _id is
// "<kind>/<name>" (a kind holds no '/'), so that the unique _id index
// decides between creators and sorts a kind's definitions by name.
type defDoc struct {
	ID          string    `bson:"_id"`
	Kind        string    `bson:"kind"`
	Name        string    `bson:"name"`
	Spec        string    `bson:"spec"`
	Description string    `bson:"description,omitempty"`
	Retired     bool      `bson:"retired"`
	Updated     time.Time `bson:"update_time"`
}

// defID is the _id of a definition's document.
func defID(kind, name string) string { return kind + "/" + name }

// get is the definition the document holds; it never fails.
func (d *defDoc) get() (idforge.Definition, error) {
	return idforge.Definition{Kind: d.Kind, Name: d.Name, Spec: d.Spec, Description: d.Description,
		Retired: d.Retired, Updated: d.Updated.UTC()}, nil
}

// CreateDefinition implements idforge.DefinitionStore: it inserts the
// definition's document.
//
// Errors: those of idforge.Definition.Validate; ErrKeyExists when the
// kind has a definition of that name, live or retired; an error saying
// to run `idforge migrate` on a database without idforge's collections;
// ErrClosed after Close.
func (s *Store) CreateDefinition(ctx context.Context, d idforge.Definition) error {
	if err := s.life.CheckOpen(); err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	doc := defDoc{ID: defID(d.Kind, d.Name), Kind: d.Kind, Name: d.Name, Spec: d.Spec, Description: d.Description,
		Updated: time.Now().UTC()}
	return s.insert(ctx, s.defs, doc, fmt.Errorf("%w: %s", idforge.ErrKeyExists, claim.DefinitionName(d.Kind, d.Name)), "create "+claim.DefinitionName(d.Kind, d.Name))
}

// UpdateDefinition implements idforge.DefinitionStore: one updateOne of
// a live definition's document. Its errors are CreateDefinition's, with
// ErrUnknownKey when there is no such definition and idforge.ErrRetired
// when it is retired.
func (s *Store) UpdateDefinition(ctx context.Context, d idforge.Definition) error {
	if err := s.life.CheckOpen(); err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	// An empty description is no field, as CreateDefinition stores it.
	upd := bson.D{{Key: "$set", Value: bson.D{{Key: "spec", Value: d.Spec}, {Key: "description", Value: d.Description},
		{Key: "update_time", Value: time.Now().UTC()}}}}
	if d.Description == "" {
		upd = bson.D{{Key: "$set", Value: bson.D{{Key: "spec", Value: d.Spec}, {Key: "update_time", Value: time.Now().UTC()}}},
			{Key: "$unset", Value: bson.D{{Key: "description", Value: ""}}}}
	}
	return s.changeDefinition(ctx, d.Kind, d.Name, true, upd, "update "+claim.DefinitionName(d.Kind, d.Name))
}

// RetireDefinition implements idforge.DefinitionStore. Its errors are
// CreateDefinition's, with ErrUnknownKey when there is no such
// definition.
func (s *Store) RetireDefinition(ctx context.Context, kind, name string) error {
	if err := s.life.CheckOpen(); err != nil {
		return err
	}
	upd := bson.D{{Key: "$set", Value: bson.D{{Key: "retired", Value: true}, {Key: "update_time", Value: time.Now().UTC()}}}}
	return s.changeDefinition(ctx, kind, name, false, upd, "retire "+claim.DefinitionName(kind, name))
}

// changeDefinition applies upd to the definition's document, to a live
// one only when live is set; when it matches none, it reads the document
// to tell an unknown definition from a retired one.
func (s *Store) changeDefinition(ctx context.Context, kind, name string, live bool, upd bson.D, what string) error {
	cctx, cancel, err := s.start(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	filter := bson.D{{Key: "_id", Value: defID(kind, name)}}
	if live {
		filter = append(filter, bson.E{Key: "retired", Value: false})
	}
	res, err := s.defs.UpdateOne(cctx, filter, upd)
	if err != nil {
		return s.life.Wrap(cctx, err, what)
	}
	if res.MatchedCount > 0 {
		return nil
	}
	d, err := s.Definition(ctx, kind, name)
	return store.WhyUnchanged(d, err, live)
}

// Definition implements idforge.DefinitionStore. Its errors are
// CreateDefinition's, with ErrUnknownKey when there is no such
// definition.
func (s *Store) Definition(ctx context.Context, kind, name string) (idforge.Definition, error) {
	return findOne(ctx, s, s.defs, defID(kind, name), fmt.Errorf("%w: %s", idforge.ErrUnknownKey, claim.DefinitionName(kind, name)),
		"read "+claim.DefinitionName(kind, name), (*defDoc).get)
}

// Definitions implements idforge.DefinitionStore: the kind's
// definitions, retired ones included, sorted by name in byte order. Its
// errors are CreateDefinition's.
func (s *Store) Definitions(ctx context.Context, kind string) ([]idforge.Definition, error) {
	return find(ctx, s, s.defs, bson.D{{Key: "kind", Value: kind}}, "list "+kind+" definitions", (*defDoc).get)
}
