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
// Template.NextN several. A Template is safe for concurrent use. Serials
// are unique because a number in them is, and Parse accepts only a
// template that can prove it (see Uniqueness).
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
// on the left with C (default 0; a digit other than 0 is refused, since
// width=3,pad=1 would render 1 and 11 alike) to N characters. A width
// only pads: it never cuts or wraps a number, and a number with more than
// N digits is never rendered (see "When a width runs out"). Without width
// the number takes up to 19 digits. Negative numbers are an error.
//
// seq:NAME,by=PARAM[,width=N] draws from the source NAME-VALUE, where
// VALUE is the request's PARAM (JD's job numbers per counting unit:
// @{seq:jobs,by=unit} counts unit 6541 in jobs-6541). When NAME is a
// per-period counter (a CounterSet), NAME-VALUE is its member, counting
// per period for each value (010-6541-00001 restarting daily); otherwise
// the Resolver must be a Creator, which returns the source, creating it
// on first use. See "Counters chosen by a parameter".
//
// param:NAME[,width=N[,pad=C]|,max=N][,chars=SET][,in=A|B|…] renders the request
// parameter NAME after checking it: it must be present and non-empty,
// consist of characters of SET (default safe), and be exactly N
// characters long with width=N, or at most N with width=N,pad=C (then
// padded on the left with C, which must be in SET), or at most max=N
// (default 32), and, with in=, be one of the values listed. A missing or malformed parameter is an error wrapping
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
// context (time, parameters, the values of parts it refers to). A custom
// part is not a counter unless it implements UniqueCounter and says so.
//
// # Uniqueness
//
// A template must be able to prove that it never renders the same serial
// twice, or Parse refuses it with a *SyntaxError naming the problem. The
// proof rests on a counter: a seq part, or a custom part that declares
// itself a UniqueCounter. Static text, dates, parameters, checksums and
// random characters all repeat (R@{random:4} has 10,000 values), so a
// template of those alone is refused: a label that may repeat is not a
// serial.
//
// The counter's text must also be readable out of every serial, or two
// numbers could render alike next to a part of varying length
// (@{param:shop}@{seq:order} renders shop A1 with 23 and shop A12 with 3
// both as A123). It is readable when the parts before it all have a
// fixed length (or those after it), and it has a fixed length itself
// (width=) or is closed on the other side by fixed-length parts or by
// static text that starts (ends) with a byte it never renders, such as
// "-" after a number. Fixed-length parts are static text, seq and param
// with width=, checksums, random, and dates whose fields are all padded
// (yyyy, yy, MM, dd, DDD, HH, hh, mm, ss, S…); M, d, D, H, h, m and s vary,
// and custom parts count as varying.
//
// A per-period counter repeats its numbers in every period, so its
// period must be readable too: it must say which period it counts in
// (idforge.PeriodReporter), a readable, fixed-length date must show every
// field of that period in the counter's time zone (seconds and minutes
// line up in every zone; yy counts as the year, DDD as the month and
// day; a two-digit year repeats after a century), and it must be the
// template's only per-period counter, since dates show the latest period
// of all of them. QJ@{seq:daily} would issue QJ1 again tomorrow, and is
// refused. One counter that makes the proof is enough; other seq parts
// may be anything.
//
// # Counters chosen by a parameter
//
// A seq part with by=PARAM counts apart for each value of the parameter,
// in a source created on first use, so an arbitrary request must not be
// able to create any source it likes, and two values must not render the
// same serial. Parse therefore requires the template to hold
// @{param:PARAM}, whose limits (chars=, width= or max=, in=) every value
// passes before a source is chosen, so NAME-VALUE is always a valid key
// name of at most idforge.MaxKeyLen characters; and the parameter's text
// must be readable out of every serial as a counter's is (see
// Uniqueness), without pad= (width=3,pad=1 renders 1 and 11 alike). Then
// the serial shows both the value and the number, and the pair never
// repeats. A source the Creator returns must be a Generator, not a
// PeriodCounter. A member of a per-period counter repeats its numbers
// every period, so its period must be shown too, as for the counter
// itself; a member whose name already names a source is refused (with
// idforge.ErrUnsafeChange), since that source may hold numbers already
// shown.
//
// # When a width runs out
//
// A number with more digits than its width= is never rendered and never
// wrapped: from a source that is a BoundedGenerator (a segment key) the
// part asks only for numbers below 10^N, so the numbers too wide stay
// unused for other users of the source; from any other source the number
// is drawn, found too wide and lost (a gap, never a duplicate). NextN
// serves the serials that fit and stops there, without an error; a
// request of which not even the first serial fits is an error wrapping
// idforge.ErrSpaceExhausted, and from a bounded source it uses up
// nothing. A batch from a bounded source without width= is drawn the
// same way under what int64 holds, so a key that runs out of space within
// a batch serves the serials before its end too. With several bounded seq
// parts the one with the least room cuts the batch, and numbers the
// others drew past that point are lost.
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
