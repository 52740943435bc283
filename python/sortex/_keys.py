"""sortex._keys: how numpy elements become keys the library sorts, and back.

The library sorts 64-bit keys (sortex_sort(), as unsigned, signed or IEEE double numbers) and
records whose key is a byte string compared as unsigned big-endian (sortex_sort_records()).

- Numbers of at most 64 bits take the fast path, 64-bit keys: unsigned integers and bool are
  widened to uint64 and signed ones to int64 in one copy (the library's i64 order), float64 is
  the library's f64 order as it is, and float16 and float32 are mapped onto unsigned integers
  by the order-preserving map of IEEE numbers (negative numbers flip every bit, the others the
  sign bit: -0 before +0, NaNs at the ends by their sign, as the program's f64). The map is a
  bijection, so equal keys are equal elements and the sort needs no stability; the result is
  mapped back in one pass (int64, uint64 and float64 come back as they are, without a copy).
- Everything else (long double, bytes, str, structured arrays by the fields of `order`) takes
  records: each field's order-preserving big-endian bytes one after the other make the key, and
  the element's own bytes ride behind it as payload; the library's stable record sort keeps
  equal keys in input order.
"""

import numpy as np

_U8 = np.uint8
# The largest record the library sorts (sortex_format_layout()).
RECORD_LIMIT = 65536


def _flip(bits, width):
    """IEEE bits of one width (unsigned) -> unsigned keys in the numbers' total order."""
    top = np.array(1 << (width - 1), bits.dtype)
    ones = np.array((1 << width) - 1, bits.dtype)
    return bits ^ ((bits >> (width - 1)) * ones | top)


def _unflip(keys, width):
    top = np.array(1 << (width - 1), keys.dtype)
    ones = np.array((1 << width) - 1, keys.dtype)
    return keys ^ (((keys >> (width - 1)) ^ 1) * ones | top)


def _native(v):
    """v with its dtype in this machine's byte order (a copy only when it was not)."""
    return v.astype(v.dtype.newbyteorder("="), copy=False)


def ordered_u64(a):
    """A uint64 array of a's numbers (bool, integers, float16/32/64) mapped in order, to be
    read only (a itself for uint64)."""
    kind, size = a.dtype.kind, a.dtype.itemsize
    if kind in "bu":
        return a.astype(np.uint64, copy=False)  # read only: a itself when it is uint64
    if kind == "i":
        return a.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    bits = _native(a).view("u%d" % size)
    return _flip(bits, 8 * size).astype(np.uint64, copy=False)


def _long_double_bytes():
    """Significant bytes of np.longdouble (little-endian): 10 for x87's 80-bit format, 16 for
    IEEE binary128; 0 when it is another format (or plain double, which is float64)."""
    info, size = np.finfo(np.longdouble), np.dtype(np.longdouble).itemsize
    if info.nmant == 63 and info.nexp == 15 and size >= 10:
        return 10
    if info.nmant == 112 and size == 16:
        return 16
    return 0


def _field_bytes(v):
    """(n, size) uint8: v's elements as order-preserving big-endian byte strings."""
    dt, n = v.dtype, len(v)
    kind, size = dt.kind, dt.itemsize
    if kind == "b":
        return v.view(_U8).reshape(n, 1)
    if kind in "iu":
        u = _native(v).view("u%d" % size)
        if kind == "i":
            u = u ^ np.array(1 << (8 * size - 1), u.dtype)
        return u.astype(">u%d" % size).view(_U8).reshape(n, size)
    if kind == "f" and size in (2, 4, 8):
        return _flip(_native(v).view("u%d" % size), 8 * size).astype(
            ">u%d" % size).view(_U8).reshape(n, size)
    if kind == "f":
        sig = _long_double_bytes()
        raw = np.ascontiguousarray(_native(v)).view(_U8).reshape(n, size)
        kb = raw[:, sig - 1::-1].copy()  # the significant bytes, most significant first
        neg = (kb[:, 0] & 0x80) != 0
        kb[neg] ^= 0xFF
        kb[~neg, 0] ^= 0x80
        return kb
    if kind in "SV":
        return np.ascontiguousarray(v).view(_U8).reshape(n, size)
    if kind == "U":
        return _native(v).view("u4").reshape(n, size // 4).astype(">u4").view(_U8).reshape(
            n, size)
    raise TypeError("cannot sort by %s" % dt)


def _sortable(dt, name):
    """Raises TypeError unless elements of dt can be keys."""
    if dt.subdtype is not None:
        raise TypeError("cannot sort by the sub-array field %s (%s)" % (name, dt))
    if dt.names is not None:
        for f in dt.names:
            _sortable(dt.fields[f][0], "%s.%s" % (name, f))
        return
    if dt.kind in "biuSVU":
        return
    if dt.kind == "f" and (dt.itemsize in (2, 4, 8) or _long_double_bytes()):
        return
    raise TypeError("cannot sort %s elements (%s): the keys are integers, floats, bool, "
                    "bytes, str, or structured arrays of them" % (name, dt))


def _leaves(a, dt, path=()):
    """The key's columns of structured a in order, nested structures flattened: (path, dtype)."""
    for f in dt.names:
        sub = dt.fields[f][0]
        if sub.names is not None:
            yield from _leaves(a, sub, path + (f,))
        else:
            yield path + (f,), sub


class KeyPlan:
    """How the elements of one dtype (and order) become keys: `numeric` with the 64-bit key
    path (library_format, fill_u64, from_u64), else records (key_size, fill_keys)."""

    def __init__(self, dtype, order):
        self.dtype = dt = np.dtype(dtype)
        if dt.names is None:
            if order is not None:
                raise ValueError("order names fields, and this array (%s) has none" % dt)
            _sortable(dt, "the")
            self.fields = [((), dt)]
        else:
            names = [order] if isinstance(order, str) else order
            if names is None:
                names = list(dt.names)
            if not isinstance(names, (list, tuple)) or not names or \
                    not all(isinstance(x, str) for x in names):
                raise TypeError("order must be a field name or a list of them (not %r)"
                                % (order,))
            missing = [x for x in names if x not in dt.names]
            if missing:
                raise ValueError("no field %s; the fields are %s" % (
                    ", ".join(map(repr, missing)), ", ".join(dt.names)))
            if len(set(names)) != len(names):
                raise ValueError("order names a field twice (%s)" % ", ".join(names))
            self.fields = []
            for x in names:
                sub = dt.fields[x][0]
                _sortable(sub, repr(x))
                if sub.names is not None:
                    self.fields += [((x,) + p, d) for p, d in _leaves(None, sub)]
                else:
                    self.fields.append(((x,), sub))
        kind, size = dt.kind, dt.itemsize
        self.numeric = dt.names is None and (kind in "biu" or (kind == "f" and size in (2, 4, 8)))
        self.key_size = sum(d.itemsize if d.kind != "f" or d.itemsize in (2, 4, 8)
                            else _long_double_bytes() for _, d in self.fields)
        if not self.numeric and self.key_size + max(size, 8) > RECORD_LIMIT:
            raise ValueError("elements of %d bytes with a %d-byte key make records beyond the "
                             "library's %d bytes" % (size, self.key_size, RECORD_LIMIT))
        self.signature = (dt.descr if dt.names else dt.str, tuple(".".join(p) for p, _ in
                                                                  self.fields))
        if self.numeric:
            self.library_format = {"i": "i64", "f": "f64" if size == 8 else "u64"}.get(kind,
                                                                                      "u64")
            self.path = "64-bit keys (%s%s)" % (self.library_format, "" if size == 8 and kind
                                                 != "b" else ", from %s" % dt)
        else:
            self.library_format = None
            self.path = "records: %d-byte keys, then the %d-byte elements" % (self.key_size,
                                                                             size)

    # -- 64-bit keys --

    def fill_u64(self, a, v):
        """Writes a's keys into v (uint64, the library's buffer)."""
        kind, size = a.dtype.kind, a.dtype.itemsize
        if kind in "bu":
            np.copyto(v, a, casting="unsafe")
        elif kind == "i":
            np.copyto(v.view(np.int64), a, casting="unsafe")
        elif size == 8:
            np.copyto(v.view(np.float64), a, casting="unsafe")
        else:
            np.copyto(v, _flip(_native(a).view("u%d" % size), 8 * size), casting="unsafe")

    def from_u64(self, buf, m):
        """The m sorted keys in buf (a sortex._Buffer) as elements of the dtype. 64-bit
        numbers in this machine's byte order are handed over without a copy; the others are
        converted and the buffer freed."""
        dt = self.dtype
        kind, size = dt.kind, dt.itemsize
        if size == 8 and dt.isnative and kind != "b":
            return buf.give(dt, m)
        try:
            v = buf.array(np.uint64, m)
            if kind in "bu":
                return v.astype(dt)
            if kind == "i":
                return v.view(np.int64).astype(dt)
            if size == 8:
                return v.view(np.float64).astype(dt)
            bits = _unflip(v.astype("u%d" % size), 8 * size)
            return bits.view("f%d" % size).astype(dt, copy=False)
        finally:
            buf.free()

    # -- records --

    def fill_keys(self, a, kv):
        """Writes the key bytes of a's elements into kv ((n, key_size) uint8 view)."""
        off = 0
        for path, _ in self.fields:
            col = a
            for p in path:
                col = col[p]
            b = _field_bytes(col)
            kv[:, off:off + b.shape[1]] = b
            off += b.shape[1]
