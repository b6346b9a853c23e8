# SPDX-License-Identifier: LGPL-2.1-or-later
"""A D-Bus method call from scratch, on the wire: for arguments that no command-line client can carry (a 16 MiB
string is far past the kernel's limit on one argv string, and the test machine has no Python D-Bus module).
Little-endian, EXTERNAL authentication, string, uint32 and uint64 arguments only; enough for a call and its
reply."""
import os
import socket
import struct

METHOD_CALL, METHOD_RETURN, ERROR = 1, 2, 3
PATH, INTERFACE, MEMBER, ERROR_NAME, REPLY_SERIAL, DESTINATION, SIGNATURE = 1, 2, 3, 4, 5, 6, 8


class Writer:
    def __init__(self):
        self.data = bytearray()

    def align(self, n):
        self.data += b"\0" * (-len(self.data) % n)

    def byte(self, v):
        self.data += bytes([v])

    def u32(self, v):
        self.align(4)
        self.data += struct.pack("<I", v)

    def u64(self, v):
        self.align(8)
        self.data += struct.pack("<Q", v)

    def string(self, v):
        raw = v if isinstance(v, bytes) else v.encode()
        self.u32(len(raw))
        self.data += raw + b"\0"

    def signature(self, v):
        self.byte(len(v))
        self.data += v.encode() + b"\0"


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def align(self, n):
        self.pos += -self.pos % n

    def byte(self):
        self.pos += 1
        return self.data[self.pos - 1]

    def u32(self):
        self.align(4)
        self.pos += 4
        return struct.unpack_from("<I", self.data, self.pos - 4)[0]

    def string(self):
        n = self.u32()
        self.pos += n + 1
        return self.data[self.pos - n - 1:self.pos - 1].decode()

    def signature(self):
        n = self.byte()
        self.pos += n + 1
        return self.data[self.pos - n - 1:self.pos - 1].decode()

    def value(self, sig):
        if sig in "sog":
            return self.signature() if sig == "g" else self.string()
        if sig == "u":
            return self.u32()
        raise ValueError(f"cannot read {sig}")


def message(serial, path, interface, member, destination, signature, args):
    body = Writer()
    for sig, arg in zip(signature, args):
        body.string(arg) if sig == "s" else body.u64(arg) if sig == "t" else body.u32(arg)
    fields = [(PATH, "o", path), (INTERFACE, "s", interface), (MEMBER, "s", member),
              (DESTINATION, "s", destination)] + ([(SIGNATURE, "g", signature)] if signature else [])
    head = Writer()
    head.data += b"l" + bytes([METHOD_CALL, 0, 1])
    head.u32(len(body.data))
    head.u32(serial)
    array = Writer()
    array.data = bytearray(16)  # the array's contents are aligned as if they followed the fixed header
    for code, sig, value in fields:
        array.align(8)
        array.byte(code)
        array.signature(sig)
        array.signature(value) if sig == "g" else array.string(value)
    head.u32(len(array.data) - 16)
    head.data += array.data[16:]
    head.align(8)
    return bytes(head.data + body.data)


class Connection:
    def __init__(self, socket_path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(socket_path)
        self.sock.settimeout(30)
        self.serial = 0
        self.sock.sendall(b"\0AUTH EXTERNAL " + str(os.geteuid()).encode().hex().encode() + b"\r\n")
        line = self._line()
        if not line.startswith(b"OK "):
            raise RuntimeError(f"authentication refused: {line!r}")
        self.sock.sendall(b"BEGIN\r\n")
        self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")

    def _line(self):
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("the bus hung up")
            data += chunk
        return data

    def _exactly(self, n):
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(min(n - len(data), 1 << 20))
            if not chunk:
                raise RuntimeError("the bus hung up")
            data += chunk
        return bytes(data)

    def _receive(self):
        fixed = self._exactly(16)
        if fixed[0:1] != b"l":
            raise RuntimeError("only little-endian messages are understood")
        kind = fixed[1]
        body_length, _, fields_length = struct.unpack_from("<III", fixed, 4)
        rest = self._exactly(fields_length + (-(16 + fields_length) % 8) + body_length)
        r = Reader(fixed + rest)
        r.pos = 12
        end = 16 + r.u32()
        fields = {}
        while r.pos < end:
            r.align(8)
            code = r.byte()
            sig = r.signature()
            fields[code] = r.value(sig)
        r.align(8)
        signature = fields.get(SIGNATURE, "")
        body = [r.value(sig) for sig in signature] if all(sig in "sogu" for sig in signature) else None
        return kind, fields, body

    def send(self, destination, path, interface, member, signature="", *args):
        """Sends a call without waiting for its reply (calls may be pipelined); returns its serial."""
        self.serial += 1
        self.sock.sendall(message(self.serial, path, interface, member, destination, signature, args))
        return self.serial

    def receive_raw(self):
        """The next message: (its reply serial or None, error name or None, its body's bytes as sent)."""
        fixed = self._exactly(16)
        if fixed[0:1] != b"l":
            raise RuntimeError("only little-endian messages are understood")
        kind = fixed[1]
        body_length, _, fields_length = struct.unpack_from("<III", fixed, 4)
        rest = self._exactly(fields_length + (-(16 + fields_length) % 8) + body_length)
        data = fixed + rest
        r = Reader(data)
        r.pos = 16
        fields = {}
        while r.pos < 16 + fields_length:
            r.align(8)
            code = r.byte()
            sig = r.signature()
            fields[code] = r.value(sig)
        return fields.get(REPLY_SERIAL), (fields.get(ERROR_NAME) if kind == ERROR else None), data[-body_length:] \
            if body_length else b""

    def call(self, destination, path, interface, member, signature="", *args):
        """(error name or None, body values: None when they are of other types than s, o, g and u)."""
        self.serial += 1
        self.sock.sendall(message(self.serial, path, interface, member, destination, signature, args))
        while True:
            kind, fields, body = self._receive()
            if fields.get(REPLY_SERIAL) == self.serial:
                return (fields.get(ERROR_NAME) if kind == ERROR else None), body

    def close(self):
        self.sock.close()
