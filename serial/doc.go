// Package serial renders serial numbers (单号) from templates: static text
// mixed with @{…} expressions for dates, numbers from named generators,
// request parameters, check digits and random characters, in the manner
// of JD's serial-number platform.
//
//	@{date:yyyyMMdd}@{seq:order,width=5}                     2017030400001
//	@{param:area}-@{param:unit,width=4}-@{seq:jobs,width=5}  010-6541-00001
//	QJ@{seq:qj,width=6}                                      QJ000001
//	SN-@{seq:sn,width=6}-@{checksum:mod,of=seq}              SN-000123-2
//	@{date:yyMMddHHmmss}@{seq:persec,width=4}                2504131200000001
//
// Parse compiles a template once; Template.Next renders one serial and
// Template.NextN several. A Template is safe for concurrent use. It adds
// no uniqueness of its own: serials are unique because the numbers in
// them are, so every template that must be unique needs a seq part (and
// a per-period counter only together with the date of its period).
//
// # Syntax
//
//	template = { text | expr } .
//	text     = any UTF-8 except control characters; "@@" is a literal "@",
//	           "@{" starts an expression, any other "@" is literal .
//	expr     = "@{" kind [ ":" value ] { "," option } "}" .
//	kind     = letter { letter | digit | "_" | "-" | "." } .
//	option   = name "=" value .
//	name     = letter { letter | digit | "_" } .
//	value    = { char | "'" { char | "''" } "'" } .
//	           (no "," or "}" outside single quotes; blanks around
//	           kinds, names and values are ignored)
//
// A template is at most MaxTextLen bytes. Every expression may take
// as=NAME to give its part a name for references. Errors are *SyntaxError values naming the 1-based byte
// column of the problem; they wrap idforge.ErrInvalidArgument.
//
// # Kinds
//
// date:LAYOUT[,tz=ZONE] renders the evaluation's time. LAYOUT is a Java
// (SimpleDateFormat / JD) pattern: yyyy and yy (year), MM and M (month),
// dd and d (day), DDD and D (day of year), HH and H (hour 0-23), hh and
// h (hour 1-12), mm and m (minute), ss and s (second), S to SSSSSSSSS
// (fraction of a second, SSS = milliseconds). Text in single quotes is
// literal and a doubled single quote is a quote; other ASCII letters are
// refused, any other character is literal. ZONE is an IANA name
// (Asia/Shanghai), UTC, Local or an offset (+08:00); the default is
// Options.Location, itself UTC by default. Years outside 0-9999 are an
// evaluation error.
//
// seq:NAME[,width=N[,pad=C]] renders a number from the source
// Options.Resolver returns for NAME at parse time: an idforge.Generator
// (a segment or snowflake key, a Redis INCR, …) or an
// idforge.PeriodCounter (a counter per second or per day). width=N pads
// on the left with C (default 0) to N characters; a number with more
// than N digits is an error wrapping idforge.ErrSpaceExhausted, never a
// longer serial. Without width the number takes up to 19 digits.
// Negative numbers are an error.
//
// param:NAME[,width=N[,pad=C]|,max=N][,chars=SET] renders the request
// parameter NAME after checking it: it must be present and non-empty,
// consist of characters of SET (default safe), and be exactly N
// characters long with width=N, or at most N with width=N,pad=C (then
// padded on the left with C, which must be in SET), or at most max=N
// (default 32). A missing or malformed parameter is an error wrapping
// idforge.ErrInvalidArgument that names it.
//
// checksum:ALGO[,of=PART] renders one check character computed from the
// digits of the part named PART, or, with of=all (the default), from the
// digits of all the text before the checksum (other characters are
// skipped). A named part must render only digits: a built-in part that
// could render anything else is refused at parse time (a param needs
// chars=digits), a custom part fails the evaluation. ALGO is mod (JD's n*9%31%10 on the number n the digits
// spell), luhn (Luhn mod 10) or iso7064 (ISO 7064 MOD 11-2: 0-9 or X).
//
// random:N[,chars=SET] renders N characters (default digits) chosen
// uniformly with crypto/rand. Random characters add no uniqueness
// guarantee; they make serials hard to guess.
//
// The character sets are digits, alpha, upper, lower, alnum, upperalnum,
// loweralnum, hex (0-9a-f), upperhex, crockford (Crockford's base 32:
// digits and upper-case letters without I, L, O, U) and safe (letters,
// digits, '-' and '_').
//
// A Go program adds kinds with RegisterKind: a Kind compiles an Expr into
// a Part that knows its maximum length and renders itself given the Eval
// context (time, parameters, the values of parts it refers to).
//
// # Names and references
//
// A part answers to its as= name, a seq part also to its generator NAME,
// a param part to its parameter NAME, and any part to its kind name when
// it is the only part of that kind (so of=seq means the one seq part).
// An as= name must be unique; a name shared by several parts is an error
// only when something refers to it. checksum's of= and a custom Part's
// Referrer.Refs name the parts they read; "all" means the whole text
// before the referring part.
//
// # Evaluation
//
// One evaluation reads the Clock once, then
//
//  1. checks every param part, so a bad request uses up no numbers;
//  2. asks the seq sources, in text order, passing the clock reading to
//     period counters;
//  3. renders the other parts, each after the parts it refers to and
//     otherwise in text order (a checksum before its seq in the text is
//     still computed from it). Reference cycles and references to
//     unknown parts are parse errors.
//
// Dates render the clock reading, unless a PeriodCounter returned a
// later period (it waited for the next period when one was full, or the
// clock stepped back behind a period it already counted in): then they
// render the start of that period, so the date always belongs to the
// period the number was counted in, also across midnight. With several
// counters the latest period wins. A per-day counter must cut its days
// in the zone the date part renders in.
//
// # Lengths
//
// The longest serial a template can render is known at parse time
// (Template.MaxLen, in bytes): static text, plus each part's maximum
// (width=N, a date layout's width, 1 for a checksum, N for random, 19
// for a seq without width, max= or 32 for a param without width).
// Options.MaxLen refuses templates that could exceed a column's width.
// When every part has a fixed width all serials have that length.
package serial
