"""Lists the op types of an ONNX file with only the protobuf runtime.

torch's exporter does not need the onnx package, and neither does this: it parses
the ModelProto wire format directly (fields: ModelProto.graph=7, GraphProto.node=1,
NodeProto.op_type=4), so the export script runs on Debian's packages alone.
"""


def _varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf):
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield field, wire, value


def op_types(path):
    with open(path, "rb") as f:
        model = f.read()
    ops = set()
    for field, wire, graph in _fields(model):
        if field == 7 and wire == 2:
            for gfield, gwire, node in _fields(graph):
                if gfield == 1 and gwire == 2:
                    for nfield, nwire, value in _fields(node):
                        if nfield == 4 and nwire == 2:
                            ops.add(bytes(value).decode())
    return sorted(ops)
