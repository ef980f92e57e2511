"""doikit.handle's native protocol codec against CNRI HANDLE.NET 9.2.0's own traffic.

The captures (tests/vectors/handle-native/, see its README) are real messages between CNRI's
client and CNRI's server; every one must decode and re-encode byte for byte, and its fields
must be those the reference's decoded listing shows. Then the data layouts, the server hash,
the framers, round trips of any message, and fuzzing: any bytes give a message or a
HandleWireError, never another exception.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import pickle
import random
import struct
import tracemalloc
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import doikit.handle as h
from doikit import DOIError
from doikit.handle import _native_site, _native_values, _wire_messages

VECTORS = Path(__file__).parent / "vectors/handle-native"


@dataclass(frozen=True)
class Capture:
    """One captured message: its id, envelope + message, its datagrams (UDP), its listing."""

    id: str
    unit: bytes
    packets: tuple[bytes, ...]
    listing: dict[str, Any]


def _load() -> list[Capture]:
    out = []
    for name in ("tcp", "udp", "two_server_udp", "http"):
        chunks = [json.loads(x) for x in (VECTORS / f"{name}.jsonl").read_text().splitlines()]
        listing = [
            json.loads(line[4:])
            for line in (VECTORS / f"{name}.decoded.txt").read_text().splitlines()
            if line[4:5] == "{"
        ]
        assert len(listing) == len(chunks)
        reassembler = h.UdpReassembler()
        packets: dict[str, list[tuple[int, bytes]]] = {}
        for i, chunk in enumerate(chunks):
            data = bytes.fromhex(chunk["hex"])
            assert len(data) == chunk["len"]
            if name == "http":
                data = data.partition(b"\r\n\r\n")[2]
            if chunk["relay"] == "udp":
                packets.setdefault(chunk["dir"], []).append((i, data))
                unit = reassembler.feed(data, chunk["dir"])
                if unit is None:
                    continue
                first, _ = packets[chunk["dir"]][0]
                sent = tuple(p for _, p in packets.pop(chunk["dir"]))
                out.append(Capture(f"{name}:{first}", unit, sent, listing[first]))
            else:
                out.append(Capture(f"{name}:{i}", data, (), listing[i]))
    return out


CAPTURES = _load()
BY_ID = {c.id: c for c in CAPTURES}


def _cap(capture_id: str) -> h.Message:
    return h.decode(BY_ID[capture_id].unit)


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.id for c in CAPTURES])
def test_every_capture_decodes_and_reencodes_byte_for_byte(capture: Capture) -> None:
    msg = h.decode(capture.unit)
    assert h.encode(msg) == capture.unit
    if capture.packets:
        assert h.encode_datagrams(msg) == list(capture.packets)
    envelope = h.decode_envelope(capture.unit)
    assert h.decode_message(capture.unit[20:], envelope) == msg


def _check_value(value: h.HandleValue, listed: dict[str, Any]) -> None:
    assert value.index == listed["index"]
    assert value.type == listed["type"]
    assert value.timestamp == listed["ts"]
    assert value.ttl == listed["ttl"]
    assert listed["ttlType"] == 0
    assert value.permissions == listed["perm"]
    raw = h.data_to_wire(value.data)
    assert raw.decode("utf-8", "replace") == listed["data"] or raw.hex().startswith(listed["data"])
    assert listed["refs"] == []


def _check_body(msg: Any, body: dict[str, Any]) -> None:
    for key, listed in body.items():
        if key == "values":
            assert len(msg.values) == len(listed)
            for value, item in zip(msg.values, listed, strict=True):
                _check_value(value, item)
        elif key == "indexes":
            assert len(msg.indexes) == listed
        elif key == "types":
            assert list(msg.types) == listed
        elif key == "nonce":
            assert msg.nonce.hex() == listed
        elif key == "authType":
            assert msg.auth_type == listed
        elif key == "id":
            assert f"{msg.identity_index}:{msg.identity_handle}" == listed
        elif key == "signedResponse":
            assert msg.signed_response.hex() == listed
        else:
            assert getattr(msg, key) == listed, key


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.id for c in CAPTURES])
def test_fields_are_those_of_the_decoded_listing(capture: Capture) -> None:
    msg = h.decode(capture.unit)
    envelope, header = capture.listing["envelope"], capture.listing["header"]
    assert msg.version == (envelope["major"], envelope["minor"])
    suggested = tuple(int(x) for x in envelope["suggest"].split("."))
    assert h.decode_envelope(capture.unit).suggested == suggested
    assert (msg.session_id, msg.request_id) == (envelope["sessionId"], envelope["requestId"])
    assert len(capture.unit) - 20 == envelope["messageLength"]
    assert msg.op_code == int(header["opCode"].split()[0])
    assert msg.response_code == header["responseCode"]
    assert msg.op_flags == int(header["opFlags"].split()[0], 16)
    assert msg.site_info_serial == header["siteInfoSerial"]
    assert msg.recursion_count == header["recursion"]
    assert msg.expiration == header["expiration"]
    head_body = h.header_and_body(msg)
    assert len(head_body) - 24 == header["bodyLength"]
    assert head_body.hex().startswith(capture.unit[20:44].hex())
    if "requestDigest" in capture.listing:
        listed = capture.listing["requestDigest"]
        assert msg.request_digest == h.RequestDigest(listed["alg"], bytes.fromhex(listed["digest"]))
    if "bodyHex" in capture.listing:
        assert head_body[24:].hex().startswith(capture.listing["bodyHex"])
    if "body" in capture.listing:
        _check_body(msg, capture.listing["body"])
    section = capture.unit[20 + len(head_body) :]
    assert int.from_bytes(section[:4], "big") == capture.listing["credentialLength"]
    assert (msg.credential is not None) == (capture.listing["credentialLength"] > 0)
    assert section[4:].hex().startswith(capture.listing.get("credentialHex", ""))


# --- samples, field by field (handle-protocol.md §20) ---------------------------------------


def test_v1_get_site_info_request_at_first_contact() -> None:
    msg = _cap("tcp:0")
    assert msg == h.GetSiteInfoRequest(
        request_id=1137495746,
        op_flags=h.OpFlag.RECURSIVE | h.OpFlag.CACHE_CERTIFY | h.OpFlag.PUBLIC_ONLY,
        expiration=1795915810,
        version=(2, 3),
        suggested_version=(2, 11),
    )
    assert msg.handle == "/"


def test_v2_site_info_is_the_servers_hs_site() -> None:
    msg = _cap("tcp:1")
    assert isinstance(msg, h.SiteInfoResponse)
    assert msg.op_flags == 0x99000000
    site = msg.site
    assert (site.serial_number, site.protocol_version, site.primary, site.multi_primary) == (
        1,
        (2, 11),
        True,
        False,
    )
    assert site.hash_option == h.HASH_BY_ALL
    assert site.attributes == (("desc", "doikit local test"),)
    (server,) = site.servers
    assert server.server_id == 1
    assert server.address == ipaddress.IPv4Address("127.0.0.1")
    assert [(i.type, i.protocol, i.query, i.admin) for i in server.interfaces] == [
        (3, h.PROTOCOL_TCP, True, True),
        (2, h.PROTOCOL_UDP, True, False),
        (3, h.PROTOCOL_HTTP, True, True),
    ]
    assert {i.port for i in server.interfaces} == {18541, 18542}
    key = h.public_key_from_bytes(server.public_key)
    assert isinstance(key, h.RSAPublicKey)
    assert key.e == 65537
    assert key.n.bit_length() == 2048
    assert server.public_key[: 4 + 11 + 2 + 4 + 3 + 4 + 1].endswith(b"\x01\x01\x00")
    assert h.public_key_to_bytes(key) == server.public_key  # the sign byte of n kept


def test_v4_resolution_response_values() -> None:
    msg = _cap("tcp:3")
    assert isinstance(msg, h.ResolutionResponse)
    assert msg.handle == "10.5555/TEST4"
    url, email, admin = msg.values
    assert url == h.HandleValue(1, "URL", b"https://example.org/b", 3600, 1795872610)
    assert email.data == b"a@example.org"
    assert admin.data == h.AdminData("10.5555/ADMIN", 200, "111111111111")
    assert h.value_to_json(admin)["data"] == {
        "format": "admin",
        "value": {"handle": "10.5555/ADMIN", "index": 200, "permissions": "111111111111"},
    }


def test_v5_handle_not_found_is_an_error_with_an_empty_message() -> None:
    msg = _cap("tcp:7")
    assert msg == h.ErrorResponse(
        h.OC_RESOLUTION,
        h.RC_HANDLE_NOT_FOUND,
        "",
        request_id=326655666,
        op_flags=0x99000000,
        site_info_serial=1,
        expiration=1795915813,
    )


def test_v7_challenge_digest_and_secret_key_answer() -> None:
    request, challenge, answer = _cap("tcp:20"), _cap("tcp:21"), _cap("tcp:22")
    assert isinstance(challenge, h.ChallengeResponse)
    assert challenge.op_code == h.OC_ADD_VALUE
    assert challenge.session_id == 60
    assert challenge.request_digest == h.request_digest(request)  # SHA-256 of header+body
    assert isinstance(answer, h.ChallengeAnswerRequest)
    assert (answer.session_id, answer.auth_type) == (60, "HS_SECKEY")
    parsed = h.secret_answer_from_bytes(answer.signed_response)
    assert (parsed.alg, parsed.iterations, parsed.key_bits) == (
        h.SECRET_PBKDF2_HMAC_SHA1,
        10000,
        160,
    )
    key = hashlib.pbkdf2_hmac("sha1", b"secret", parsed.salt, parsed.iterations, 20)
    assert challenge.request_digest is not None
    data = challenge.nonce + challenge.request_digest.digest
    assert hmac.new(key, data, "sha1").digest() == parsed.mac
    assert h.secret_answer_to_bytes(parsed) == answer.signed_response
    done = _cap("tcp:23")
    assert done == h.SuccessResponse(
        h.OC_ADD_VALUE,
        request_id=answer.request_id,
        op_flags=0x99000000,
        site_info_serial=1,
        expiration=1795915828,
    )


@pytest.mark.parametrize(("capture_id", "size"), [("tcp:34", 256), ("tcp:40", 46)])
def test_v8_v9_public_key_answers(capture_id: str, size: int) -> None:
    answer = _cap(capture_id)
    assert isinstance(answer, h.ChallengeAnswerRequest)
    assert answer.auth_type == "HS_PUBKEY"
    parsed = h.public_answer_from_bytes(answer.signed_response)
    assert parsed.hash_alg == "SHA-256"
    assert len(parsed.signature) == size
    assert h.public_answer_to_bytes(parsed) == answer.signed_response


_SHA256_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


def _rsa_verifies(key: h.RSAPublicKey, signature: bytes, content: bytes) -> bool:
    """PKCS#1 v1.5 with SHA-256, by the definition (no crypto library in the test)."""
    size = (key.n.bit_length() + 7) // 8
    block = pow(int.from_bytes(signature, "big"), key.e, key.n).to_bytes(size, "big")
    info = _SHA256_INFO + hashlib.sha256(content).digest()
    return block == b"\x00\x01" + b"\xff" * (size - 3 - len(info)) + b"\x00" + info


def test_certified_answers_verify_with_the_servers_key() -> None:
    site = _cap("tcp:1")
    assert isinstance(site, h.SiteInfoResponse)
    key = h.public_key_from_bytes(site.site.servers[0].public_key)
    assert isinstance(key, h.RSAPublicKey)
    signed = [
        (c.id, m) for c in CAPTURES if (m := h.decode(c.unit)).credential and c.id[:3] != "two"
    ]
    signed = [(i, m) for i, m in signed if m.credential and m.credential.type == "HS_SIGNED"]
    assert {i for i, _ in signed} >= {"tcp:15", "udp:7", "udp:10"}  # V6, V13
    for _, msg in signed:
        assert msg.credential is not None
        assert msg.credential.digest_alg == "SHA-256"
        assert _rsa_verifies(key, msg.credential.signature, h.signed_content(msg))


def test_v15_session_mac_verifies_with_the_dumped_key() -> None:
    dumped = json.loads((VECTORS / "session_key.json").read_text())
    msg = _cap("tcp:56")
    assert msg.session_id == dumped["sessionId"] == 68
    assert msg.credential is not None
    assert msg.credential == h.Credential("HS_MAC", "HMAC-SHA256", msg.credential.signature, 1)
    key = bytes.fromhex(dumped["sessionKeyHex"])
    mac = hmac.new(key, h.signed_content(msg), "sha256").digest()
    assert mac == msg.credential.signature


def test_v12_v13_session_setup_with_diffie_hellman() -> None:
    request, response = _cap("udp:6"), _cap("udp:7")
    assert isinstance(request, h.SessionSetupRequest)
    assert request.key_exchange_mode == h.KEY_EXCHANGE_DH
    assert (request.timeout, request.identity_index, request.identity_handle) == (
        86400,
        300,
        "10.5555/ADMIN",
    )
    assert isinstance(request.exchange, bytes)
    client = h.public_key_from_bytes(request.exchange)
    assert isinstance(client, h.DHPublicKey)
    assert client.g == 2
    assert client.p.bit_length() == 1024
    assert isinstance(response, h.SessionSetupResponse)
    assert response.session_id == 61
    assert len(BY_ID["udp:7"].packets) == 2
    assert response.data[:4] == b"\x00\x00\x00\x03"  # AES
    server = h.public_key_from_bytes(response.data[4:])
    assert isinstance(server, h.DHPublicKey)
    assert (server.p, server.g) == (client.p, client.g)
    # A DH key has no REST format: as an HS_PUBKEY value's data it stays bytes.
    assert h.data_from_wire("HS_PUBKEY", response.data[4:]) == response.data[4:]


def test_v17_verify_challenge_between_servers() -> None:
    lookup, vlist, verify, verdict = (_cap(f"two_server_udp:{i}") for i in range(4))
    assert isinstance(lookup, h.ResolutionRequest)
    assert lookup.indexes == (200,)
    assert lookup.op_flags & h.OpFlag.CERTIFY
    assert isinstance(vlist, h.ResolutionResponse)
    assert vlist.values[0].data == tuple(h.Reference("10.5555/ADMIN", i) for i in (300, 301, 302))
    assert isinstance(verify, h.VerifyChallengeRequest)
    assert verify.challenge_digest.alg == h.DIGEST_MD5_OLD  # CNRI's writer: the S form
    assert len(verify.challenge_digest.digest) == 32
    assert (verify.identity_index, verify.identity_handle) == (300, "10.5555/ADMIN")
    assert isinstance(verdict, h.VerifyChallengeResponse)
    assert verdict.valid


# --- data layouts from captured values ------------------------------------------------------


def _value_bytes(type_: str, data: bytes, perms: int = 0x0E) -> bytes:
    t = type_.encode()
    head = struct.pack(">iiBiB", 7, 0, 0, 86400, perms)
    return head + struct.pack(">i", len(t)) + t + struct.pack(">i", len(data)) + data + bytes(4)


def _site_record() -> bytes:
    msg = h.decode(BY_ID["tcp:1"].unit)
    return h.header_and_body(msg)[24:]


def test_hs_site_value_from_the_captured_record() -> None:
    record = _site_record()
    assert h.site_to_bytes(h.site_from_bytes(record)) == record
    for type_ in ("HS_SITE", "HS_SITE.6", "hs_site.prefix", "HS_NA_DELEGATE"):
        raw = _value_bytes(type_, record)
        value = h.value_from_wire(raw)
        assert isinstance(value.data, h.StructuredData)
        assert value.data.format == "site"
        assert h.value_to_wire(value) == raw
    assert isinstance(value.data, h.StructuredData)
    site = json.loads(value.data.json)
    assert list(site) == [
        "version",
        "protocolVersion",
        "serialNumber",
        "primarySite",
        "multiPrimary",
        "attributes",
        "servers",
    ]
    assert site["protocolVersion"] == "2.11"
    server = site["servers"][0]
    assert server["address"] == "127.0.0.1"
    assert server["publicKey"]["format"] == "key"
    assert server["publicKey"]["value"]["e"] == "AQAB"
    assert server["interfaces"][1] == {
        "query": True,
        "admin": False,
        "protocol": "UDP",
        "port": 18541,
    }
    # The REST API's JSON goes back to the same record.
    assert h.site_to_bytes(h.site_from_json(site)) == record
    # Not HS_SITE by type: the record stays bytes.
    assert h.value_from_wire(_value_bytes("HS_SITEX", record)).data == record


def test_hs_pubkey_value_from_the_captured_server_key() -> None:
    blob = h.site_from_bytes(_site_record()).servers[0].public_key
    raw = _value_bytes("HS_PUBKEY", blob)
    value = h.value_from_wire(raw)
    assert isinstance(value.data, h.StructuredData)
    assert value.data.format == "key"
    jwk = json.loads(value.data.json)
    assert list(jwk) == ["kty", "n", "e"]
    n = int.from_bytes(base64.urlsafe_b64decode(jwk["n"] + "=="), "big")
    assert n == h.public_key_from_bytes(blob).n  # type: ignore[union-attr]
    assert h.value_to_wire(value) == raw
    assert h.value_from_json(h.value_to_json(value)) == value


def test_hs_pubkey_dsa_round_trips_through_json() -> None:
    key = h.DSAPublicKey(p=(1 << 1023) + 1234567, q=(1 << 159) + 89, g=0x80FF, y=12345)
    blob = h.public_key_to_bytes(key)
    assert blob[:15] == b"\x00\x00\x00\x0bDSA_PUB_KEY"
    assert h.public_key_from_bytes(blob) == key
    data = h.data_from_wire("HS_PUBKEY", blob)
    assert isinstance(data, h.StructuredData)
    assert list(json.loads(data.json)) == ["kty", "y", "p", "q", "g"]
    assert h.data_to_wire(data) == blob
    # A non-minimal integer (a second zero byte) has no JSON form: the value stays bytes.
    wide = blob.replace(b"\x00\x00\x00\x03\x00\x80\xff", b"\x00\x00\x00\x04\x00\x00\x80\xff")
    assert h.public_key_from_bytes(wide) == key
    assert h.data_from_wire("HS_PUBKEY", wide) == wide


def test_hs_admin_and_hs_vlist_data() -> None:
    admin = bytes.fromhex("0fff0000000d31302e353535352f41444d494e000000c8")
    assert h.admin_from_bytes(admin) == h.AdminData("10.5555/ADMIN", 200, "111111111111")
    assert h.admin_to_bytes(h.admin_from_bytes(admin)) == admin
    legacy = admin[:2] + b"\x00\x00" + admin[2:]  # CNRI's legacy: two more bytes
    with pytest.raises(h.HandleWireError):
        h.admin_from_bytes(legacy)
    assert h.data_from_wire("HS_ADMIN", legacy) == legacy
    irp = b"\x1f\xff" + admin[2:]  # DO-IRP's 13th bit: kept as bytes, never dropped
    assert h.data_from_wire("HS_ADMIN", irp) == irp
    answer = _cap("two_server_udp:1")
    assert isinstance(answer, h.ResolutionResponse)
    vlist = answer.values[0]
    raw = h.data_to_wire(vlist.data)
    assert h.vlist_from_bytes(raw) == vlist.data
    assert h.vlist_to_bytes(h.vlist_from_bytes(raw)) == raw
    assert h.value_to_json(vlist)["data"]["format"] == "vlist"


def test_hs_seckey_and_hs_serv_data_are_bytes() -> None:
    raw = _value_bytes("HS_SECKEY", b"secret", perms=0x0C)
    value = h.value_from_wire(raw)
    assert (value.data, value.permissions, value.public_read) == (b"secret", "1100", False)
    assert h.value_to_wire(value) == raw
    assert h.hashed_secret(b"secret") == hashlib.sha1(b"secret").hexdigest().encode()  # noqa: S324
    assert h.service_handle(b"0.SERV/CROSSREF") == "0.SERV/CROSSREF"
    with pytest.raises(h.HandleWireError, match="byte 1"):
        h.service_handle(b"0\xff")


def test_absolute_ttl_is_a_datetime() -> None:
    raw = bytearray(_value_bytes("URL", b"x"))
    raw[8] = 1  # ttlType absolute: the ttl field is a Unix time
    value = h.value_from_wire(bytes(raw))
    assert value.ttl == datetime(1970, 1, 2, tzinfo=UTC)
    assert h.value_to_wire(value) == raw
    assert h.value_to_json(value)["ttl"] == "1970-01-02T00:00:00Z"
    raw[8] = 2
    with pytest.raises(h.HandleWireError, match=r"byte 8 \(value.ttl_type\)"):
        h.value_from_wire(bytes(raw))


# --- the server hash (§16.3, §20 V16) -------------------------------------------------------

HASHES = json.loads((VECTORS / "hash_vectors.json").read_text())["cases"]


@pytest.mark.parametrize("case", HASHES, ids=[f"{c['handle']}-{c['hashOption']}" for c in HASHES])
def test_hash_vectors(case: dict[str, Any]) -> None:
    assert h.handle_hash(case["handle"], case["hashOption"]) == case["hash"]
    assert h.server_index(case["handle"], case["hashOption"], 3) == case["serverOf3"]
    assert h.server_index(case["handle"], case["hashOption"], 4) == case["serverOf4"]


def test_the_abs_int_min_quirk(monkeypatch: pytest.MonkeyPatch) -> None:
    # Java's Math.abs(Integer.MIN_VALUE) is negative, and so is its remainder: CNRI's
    # client then has no server for the handle; a power-of-two count still gives 0.
    monkeypatch.setattr(_native_site, "handle_hash", lambda _handle, _option: -(2**31))
    server = h.ServerInfo(1, ipaddress.IPv4Address("127.0.0.1"), b"", ())
    assert h.server_index("x/y", 0, 3) == -2
    assert h.SiteInfo(servers=(server,) * 3).server_for("x/y") is None
    assert h.SiteInfo(servers=(server,) * 4).server_for("x/y") is server


def test_hash_parts_and_case() -> None:
    assert h.handle_hash("10.1000/ABC", 2) == h.handle_hash("10.1000/abc", 2)
    assert h.handle_hash("10.1000/é", 2) != h.handle_hash("10.1000/É", 2)  # ASCII only
    assert h.handle_hash("0.NA", 0) == h.handle_hash("0.NA/x", 0)  # no slash: prefix 0.NA
    with pytest.raises(h.HandleWireError, match="hash option 7"):
        h.handle_hash("10.1000/1", 7)


# --- errors: what and where -----------------------------------------------------------------


def test_wire_error_is_a_handle_format_error_and_pickles() -> None:
    exc = h.HandleWireError("length 9 runs past the end", 37, "handle")
    assert isinstance(exc, h.HandleFormatError)
    assert isinstance(exc, DOIError)
    assert isinstance(exc, ValueError)
    assert str(exc) == "byte 37 (handle): length 9 runs past the end"
    again = pickle.loads(pickle.dumps(exc))  # noqa: S301 - our own bytes
    assert (str(again), again.offset, again.field) == (str(exc), 37, "handle")


def _with_length(unit: bytes, at: int, value: int) -> bytes:
    return unit[:at] + value.to_bytes(4, "big") + unit[at + 4 :]


def test_a_string_claiming_two_gigabytes_fails_at_its_offset_without_allocating() -> None:
    unit = BY_ID["tcp:2"].unit  # V3: the handle's length is at byte 44
    bad = _with_length(unit, 44, 0x7FFFFFFF)
    tracemalloc.start()
    try:
        with pytest.raises(h.HandleWireError) as caught:
            h.decode(bad)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert caught.value.offset == 44
    assert str(caught.value) == (
        "byte 44 (handle): length 2147483647 runs past the end (21 bytes left)"
    )


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda u: u[:19], "byte 0 (envelope): needs 20 bytes, 19 given"),
        (lambda u: _with_length(u, 16, 0x7FFFFFFF), "is not 0 to 262144"),
        (lambda u: _with_length(u, 16, 0xFFFFFFFF), "message length -1 is not"),
        (lambda u: u + b"\x00", "announces 53 message bytes, 54 follow"),
        (
            lambda u: _with_length(u, 20, 106),
            "byte 20 (header.op_code): unknown request op code 106",
        ),
        (lambda u: _with_length(u, 24, 999), "unknown response code 999"),
        (lambda u: _with_length(u, 40, 30), "body length 30 runs past the end (29 bytes left)"),
        (lambda u: _with_length(u, 40, 26), "byte 69 (body): 1 byte follows the end of the body"),
        (lambda u: _with_length(u, 40, 24), "byte 65 (types): needs 4 bytes, 3 left"),
        (lambda u: u[:2] + b"\x4b" + u[3:], "byte 2 (envelope.flags): reserved bits"),
        (lambda u: u[:2] + b"\x42" + u[3:], "encrypted or compressed"),
        (lambda u: u[:15] + b"\x01" + u[16:], "byte 12 (envelope.sequence)"),
        (lambda u: u[:35] + b"\x01" + u[36:], "byte 35 (header): reserved byte is 0x01"),
        (lambda u: u[:-4] + b"\x00\x00\x00\x09", "byte 69 (credential): length 9 runs past"),
    ],
)
def test_errors_say_what_and_where(mutate: Any, message: str) -> None:
    with pytest.raises(h.HandleWireError, match=message.replace("(", r"\(").replace(")", r"\)")):
        h.decode(mutate(BY_ID["tcp:2"].unit))


def test_a_message_may_end_right_after_its_body() -> None:
    unit = BY_ID["tcp:2"].unit
    short = _with_length(unit, 16, len(unit) - 24)[:-4]
    assert h.decode(short) == h.decode(unit)


@pytest.mark.parametrize(
    ("msg", "message"),
    [
        (h.ErrorResponse(1, h.RC_SUCCESS), "1 is not an error code"),
        (h.ErrorResponse(1, 303, version=(2, 11)), "303 is not an error code"),
        (h.ReferralResponse(1, 303, "", version=(2, 4)), "is not 302 or"),
        (h.SuccessResponse(h.OC_RESOLUTION), "op 1 has a success body of its own"),
        (h.SuccessResponse(h.OC_ADD_VALUE, op_flags=h.OpFlag.REQUEST_DIGEST), "if and only if"),
        (
            h.ResolutionRequest("x", request_digest=h.RequestDigest(h.DIGEST_SHA1, bytes(20))),
            "a request carries no request digest",
        ),
        (h.ResolutionRequest("x", indexes=(2**31,)), r"indexes\[0\]: 2147483648 is not in"),
        (h.ResolutionRequest("\ud800"), "handle: U\\+D800 at position 0 is a lone surrogate"),
        (h.ResolutionRequest("x", request_id=-1), "request_id: -1 is not in 0 to 4294967295"),
        (h.ResolutionRequest("x", envelope_flags=h.EnvelopeFlag.ENCRYPTED), "encode_envelope"),
        (h.SessionSetupRequest(4, 60, "x", 300, None), "mode 4 with NoneType"),
        (
            h.AddValueRequest("x", (h.HandleValue(1, "URL", b"", ttl=-(2**31) - 1),)),
            r"values\[0\].ttl",
        ),
        (
            h.AddValueRequest("x", (h.HandleValue(1, "URL", b"", permissions="11"),)),
            r"values\[0\].permissions: must be 4 binary digits",
        ),
        (
            h.SiteInfoResponse(
                h.SiteInfo(servers=(h.ServerInfo(1, ipaddress.IPv6Address("::1"), b"", ()),))
            ),
            "IPv6 address ::1 would read back as IPv4",
        ),
        (h.ResolutionResponse("x", (h.HandleValue(1, "T", bytes(300000)),)), "over the limit"),
        (
            h.ChallengeResponse(
                1, b"", op_flags=h.OpFlag.REQUEST_DIGEST, request_digest=h.RequestDigest(3, b"")
            ),
            "algorithm 3 with a digest of 0 bytes",
        ),
    ],
)
def test_encoding_refuses_what_would_not_decode_back(msg: h.Message, message: str) -> None:
    with pytest.raises(h.HandleWireError, match=message):
        h.encode(msg)


def test_json_the_native_layout_cannot_hold_is_a_format_error() -> None:
    site = h.StructuredData("site", '{"servers":[{"serverId":1,"address":"nowhere"}]}')
    with pytest.raises(h.HandleFormatError, match=r"data.value.servers\[0\].address"):
        h.data_to_wire(site)
    key = h.StructuredData("key", '{"kty":"EC"}')
    with pytest.raises(h.HandleFormatError, match="must be RSA or DSA"):
        h.data_to_wire(key)


# --- framing --------------------------------------------------------------------------------

TCP = [c for c in CAPTURES if c.id.startswith("tcp:")]


@given(st.lists(st.integers(1, 700), min_size=1, max_size=60))
@settings(max_examples=30)
def test_tcp_framer_cuts_a_stream_anywhere(cuts: list[int]) -> None:
    stream = b"".join(c.unit for c in TCP)
    framer = h.TcpFramer()
    got: list[h.Message] = []
    at = 0
    for size in cuts * (len(stream) // sum(cuts) + 1):
        framer.feed(stream[at : at + size])
        at += size
        while (msg := framer.next_message()) is not None:
            got.append(msg)
        if at >= len(stream):
            break
    assert got == [h.decode(c.unit) for c in TCP]
    assert framer.buffered == 0


def test_tcp_framer_refuses_a_2gb_message_at_once_and_for_good() -> None:
    framer = h.TcpFramer()
    framer.feed(BY_ID["tcp:0"].unit)
    framer.feed(_with_length(BY_ID["tcp:2"].unit, 16, 0x7FFFFFFF)[:20])
    assert framer.next_message() == h.decode(BY_ID["tcp:0"].unit)
    for _ in range(2):
        with pytest.raises(h.HandleWireError, match=r"byte 69 \(envelope.message_length\)"):
            framer.next_unit()
    assert framer.buffered == 20


def test_tcp_framer_goes_on_after_a_message_that_does_not_decode() -> None:
    bad = _with_length(BY_ID["tcp:2"].unit, 20, 106)
    framer = h.TcpFramer()
    framer.feed(bad + BY_ID["tcp:0"].unit)
    with pytest.raises(h.HandleWireError, match=r"byte 20 \(header.op_code\)"):
        framer.next_message()
    assert framer.next_message() == h.decode(BY_ID["tcp:0"].unit)


def test_tcp_framer_reads_an_http_body() -> None:
    framer = h.TcpFramer(max_message_length=1000)
    framer.feed(BY_ID["http:3"].unit)
    assert isinstance(framer.next_message(), h.ResolutionResponse)


def test_udp_reassembler_takes_packets_in_any_order_and_twice() -> None:
    capture = BY_ID["udp:7"]
    first, second = capture.packets
    reassembler = h.UdpReassembler()
    assert reassembler.feed(second, "a") is None
    assert reassembler.feed(second, "a") is None
    assert reassembler.feed(first, "b") is None  # another source: another message
    assert reassembler.pending == 2
    assert reassembler.feed(first, "a") == capture.unit
    assert reassembler.pending == 1
    reassembler.expire(now=60.0)
    assert reassembler.pending == 0


def test_udp_reassembler_is_bounded() -> None:
    first, _ = BY_ID["udp:7"].packets
    reassembler = h.UdpReassembler(max_pending=3)
    for source in range(10):
        assert reassembler.feed(first, source) is None
    assert reassembler.pending == 3
    small = h.UdpReassembler(max_pending_bytes=1000)
    for source in range(10):
        small.feed(first, source)
    assert small.pending == 1


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda p: p[:-1], "packet 0 carries 491 message bytes, not 492"),
        (lambda p: p[:12] + b"\x00\x00\x00\x02" + p[16:], "packet 2 of a 660-byte message"),
        (lambda p: _with_length(p, 16, 300000), "is not 0 to 262144"),
    ],
)
def test_udp_reassembler_refuses_what_is_no_packet(mutate: Any, message: str) -> None:
    first, _ = BY_ID["udp:7"].packets
    with pytest.raises(h.HandleWireError, match=message):
        h.UdpReassembler().feed(mutate(first))


def test_split_datagrams_wants_a_whole_message() -> None:
    unit = BY_ID["udp:7"].unit
    assert h.split_datagrams(unit) == list(BY_ID["udp:7"].packets)
    with pytest.raises(h.HandleWireError, match="announces 660 message bytes, 661 follow"):
        h.split_datagrams(unit + b"x")


def test_multi_packet_requests_carry_truncated() -> None:
    request = h.AddValueRequest("10.5555/X", (h.HandleValue(1, "DESC", bytes(1000)),))
    packets = h.encode_datagrams(request)
    assert len(packets) == 3
    assert all(p[2] & h.EnvelopeFlag.TRUNCATED for p in packets)
    assert [len(p) for p in packets] == [512, 512, len(h.encode(request)) - 2 * 492]
    reassembler = h.UdpReassembler()
    units = [reassembler.feed(p) for p in reversed(packets)]
    assert units[:2] == [None, None]
    assert units[2] is not None
    decoded = h.decode(units[2])
    assert replace(decoded, envelope_flags=0) == request


# --- round trips of any message -------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=10)
BLOB = st.binary(max_size=24)
I32 = st.integers(-(2**31), 2**31 - 1)
U32 = st.integers(0, 2**32 - 1)
I16 = st.integers(-(2**15), 2**15 - 1)
U16 = st.integers(0, 2**16 - 1)
U8 = st.integers(0, 255)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TTL = st.one_of(I32, I32.map(lambda s: EPOCH + timedelta(seconds=s)))
PERMS4 = st.integers(0, 15).map(lambda p: format(p, "04b"))
PERMS12 = st.integers(0, 4095).map(lambda p: format(p, "012b"))
REFS = st.lists(st.builds(h.Reference, TEXT, I32), max_size=3).map(tuple)
BIG = st.integers(0, 2**130)
KEYS = st.one_of(
    st.builds(h.RSAPublicKey, n=BIG, e=BIG),
    st.builds(h.DSAPublicKey, p=BIG, q=BIG, g=BIG, y=BIG),
    st.builds(h.DHPublicKey, p=BIG, g=BIG, y=BIG),
)
ADDRESSES = st.one_of(
    st.builds(ipaddress.IPv4Address, U32),
    st.builds(ipaddress.IPv6Address, st.integers(2**32, 2**128 - 1)),
)


def _sites(interface_types: st.SearchStrategy[int]) -> st.SearchStrategy[h.SiteInfo]:
    interfaces = st.builds(h.Interface, interface_types, U8, I32)
    servers = st.builds(
        h.ServerInfo,
        I32,
        ADDRESSES,
        st.one_of(BLOB, KEYS.map(h.public_key_to_bytes)),
        st.lists(interfaces, max_size=3).map(tuple),
    )
    return st.builds(
        h.SiteInfo,
        servers=st.lists(servers, max_size=2).map(tuple),
        serial_number=I16,
        protocol_version=st.tuples(U8, U8),
        primary=st.booleans(),
        multi_primary=st.booleans(),
        hash_option=U8,
        hash_filter=TEXT,
        attributes=st.lists(st.tuples(TEXT, TEXT), max_size=2).map(tuple),
        data_format_version=I16,
    )


def _structured(fmt: str, value: Any) -> h.Data:
    return h.value_from_json(
        {"index": 1, "type": "T", "data": {"format": fmt, "value": value}}
    ).data


PLAIN_TYPES = TEXT.filter(lambda t: _native_values._structured_kind(t) is None)
DATA = st.one_of(
    st.tuples(PLAIN_TYPES, BLOB),
    st.tuples(
        st.sampled_from(["HS_ADMIN", "hs_admin.x"]), st.builds(h.AdminData, TEXT, I32, PERMS12)
    ),
    st.tuples(st.sampled_from(["HS_VLIST", "HS_VLIST.group"]), REFS),
    st.tuples(
        st.sampled_from(["HS_SITE", "HS_SITE.6", "HS_SITE.PREFIX", "HS_NA_DELEGATE"]),
        _sites(st.integers(0, 3)).map(lambda s: _structured("site", h.site_to_json(s))),
    ),
    st.tuples(
        st.just("HS_PUBKEY"),
        KEYS.filter(lambda k: not isinstance(k, h.DHPublicKey)).map(
            lambda k: _structured("key", h.key_to_json(k))  # type: ignore[arg-type]
        ),
    ),
)
VALUES = st.builds(
    lambda td, index, ttl, stamp, perms, refs: h.HandleValue(
        index, td[0], td[1], ttl, stamp, perms, refs
    ),
    DATA,
    I32,
    TTL,
    I32,
    PERMS4,
    REFS,
)
VALUE_TUPLES = st.lists(VALUES, max_size=3).map(tuple)
DIGESTS = st.one_of(
    st.builds(h.RequestDigest, st.just(0), BLOB),
    *(
        st.builds(h.RequestDigest, st.just(alg), st.binary(min_size=size, max_size=size))
        for alg, size in ((1, 16), (2, 20), (3, 32))
    ),
)
CREDENTIALS = st.builds(h.Credential, TEXT, TEXT, BLOB, I32, TEXT, U8, U8, U16)
EXCHANGES = st.one_of(
    st.tuples(st.sampled_from([1, 4]), BLOB),
    st.tuples(st.just(3), st.builds(h.Reference, TEXT, I32)),
    st.tuples(st.just(2), st.none()),
)

BODIES: list[tuple[type[Any], dict[str, st.SearchStrategy[Any]]]] = [
    (
        h.ResolutionRequest,
        {
            "handle": TEXT,
            "indexes": st.lists(I32).map(tuple),
            "types": st.lists(TEXT, max_size=3).map(tuple),
        },
    ),
    *(
        (cls, {"handle": TEXT})
        for cls in (
            h.GetSiteInfoRequest,
            h.DeleteHandleRequest,
            h.ListHandlesRequest,
            h.HomeNARequest,
            h.UnhomeNARequest,
            h.ListNAsRequest,
            h.SessionTerminateRequest,
        )
    ),
    *(
        (cls, {"handle": TEXT, "values": VALUE_TUPLES})
        for cls in (h.CreateHandleRequest, h.AddValueRequest, h.ModifyValueRequest)
    ),
    (h.RemoveValueRequest, {"handle": TEXT, "indexes": st.lists(I32).map(tuple)}),
    (
        h.ChallengeAnswerRequest,
        {
            "auth_type": TEXT,
            "identity_handle": TEXT,
            "identity_index": I32,
            "signed_response": BLOB,
        },
    ),
    (
        h.VerifyChallengeRequest,
        {
            "identity_handle": TEXT,
            "identity_index": I32,
            "nonce": BLOB,
            "challenge_digest": DIGESTS,
            "signed_response": BLOB,
        },
    ),
    (
        h.SessionSetupRequest,
        {"exchange": EXCHANGES, "timeout": I32, "identity_handle": TEXT, "identity_index": I32},
    ),
    (h.SessionExchangeKeyRequest, {"encrypted_key": st.none() | BLOB}),
    (h.ResolutionResponse, {"handle": TEXT, "values": VALUE_TUPLES}),
    (h.SiteInfoResponse, {"site": _sites(U8)}),
    (h.CreateHandleResponse, {"handle": st.none() | TEXT}),
    (h.ListHandlesResponse, {"handles": st.lists(TEXT, max_size=4).map(tuple)}),
    (h.ListNAsResponse, {"handles": st.lists(TEXT, max_size=4).map(tuple)}),
    (h.VerifyChallengeResponse, {"valid": st.booleans()}),
    (h.SessionSetupResponse, {"key_exchange_mode": U16, "data": BLOB}),
    (h.SuccessResponse, {"op_code": st.sampled_from(sorted(_wire_messages.SUCCESS_WITHOUT_BODY))}),
    (h.ChallengeResponse, {"op_code": U32, "nonce": BLOB}),
    (
        h.ReferralResponse,
        {
            "op_code": U32,
            "response_code": st.sampled_from([302, 303]),
            "handle": TEXT,
            "values": st.none() | VALUE_TUPLES,
        },
    ),
    (
        h.ErrorResponse,
        {
            "op_code": U32,
            "response_code": st.sampled_from(sorted(h.RESPONSE_CODES.keys() - {1, 302, 402})),
            "message": TEXT,
            "indexes": st.none() | st.lists(I32, max_size=3).map(tuple),
        },
    ),
]
REQUEST_CLASSES = set(_wire_messages.REQUESTS.values())


@st.composite
def messages(draw: st.DrawFn) -> h.Message:
    cls, strategies = draw(st.sampled_from(BODIES))
    body = {name: draw(strategy) for name, strategy in strategies.items()}
    if cls is h.SessionSetupRequest:
        body["key_exchange_mode"], body["exchange"] = body["exchange"]
    common: dict[str, Any] = {
        "request_id": draw(U32),
        "session_id": draw(U32),
        "site_info_serial": draw(I16),
        "recursion_count": draw(U8),
        "expiration": draw(U32),
        "version": draw(st.tuples(U8, U8)),
        "suggested_version": draw(st.tuples(st.integers(0, 3), U8)),
        "envelope_flags": draw(st.sampled_from([0, h.EnvelopeFlag.TRUNCATED])),
        "credential": draw(st.none() | CREDENTIALS),
    }
    flags = draw(U32)
    if cls not in REQUEST_CLASSES:
        digest = draw(st.none() | DIGESTS)
        flags &= ~h.OpFlag.REQUEST_DIGEST
        if digest is not None:
            flags |= h.OpFlag.REQUEST_DIGEST
        common["request_digest"] = digest
    if body.get("response_code") == 303:  # a referral from 2.5 on, an error before
        minor = draw(st.integers(5, 255) if cls is h.ReferralResponse else st.integers(0, 4))
        common["version"] = (2, minor)
    msg: h.Message = cls(**body, op_flags=flags, **common)
    return msg


@given(messages())
@settings(max_examples=300)
def test_any_message_round_trips(msg: h.Message) -> None:
    unit = h.encode(msg)
    assert h.decode(unit) == msg
    envelope = h.decode_envelope(unit)
    assert h.decode_message(unit[20:], envelope) == msg
    reassembler = h.UdpReassembler()
    units = [reassembler.feed(p) for p in h.encode_datagrams(msg)]
    assert units[-1] is not None
    again = h.decode(units[-1])
    assert replace(again, envelope_flags=msg.envelope_flags) == msg


@given(VALUES)
def test_any_value_round_trips(value: h.HandleValue) -> None:
    raw = h.value_to_wire(value)
    assert h.value_from_wire(raw) == value
    if value.index >= 0 and not (isinstance(value.ttl, int) and value.ttl < 0):
        assert h.value_from_json(h.value_to_json(value)) == value  # within the REST ranges


@given(
    st.sampled_from(["HS_ADMIN", "HS_VLIST", "HS_SITE", "HS_PUBKEY", "URL"]),
    st.one_of(BLOB, _sites(U8).map(h.site_to_bytes), KEYS.map(h.public_key_to_bytes)),
)
def test_no_data_changes_on_its_way_through(type_: str, data: bytes) -> None:
    raw = _value_bytes(type_, data)
    value = h.value_from_wire(raw)
    assert h.value_to_wire(value) == raw
    assert h.data_to_wire(h.data_from_wire(type_, data)) == data


# --- fuzzing: a message or HandleWireError, nothing else ------------------------------------


def _decode_or_clean_error(data: bytes) -> h.Message | None:
    try:
        msg = h.decode(data)
    except h.HandleWireError as exc:
        assert exc.offset is None or 0 <= exc.offset <= len(data)
        return None
    again = h.encode(msg)
    if again != data:  # only a missing credential section is written back, empty
        length = int.from_bytes(data[16:20], "big")
        assert again == data[:16] + (length + 4).to_bytes(4, "big") + data[20:] + bytes(4)
    return msg


@given(st.binary(max_size=300))
def test_any_bytes(data: bytes) -> None:
    _decode_or_clean_error(data)


ENVELOPES = st.tuples(U8, U8, st.sampled_from([0, 1, 2, 3, 0x20, 0x22]), U8, U32, U32)


@given(ENVELOPES, st.binary(max_size=300))
def test_any_message_bytes_behind_a_valid_envelope(
    envelope: tuple[int, ...], message: bytes
) -> None:
    head = struct.pack(">BBBBIIII", *envelope, 0, len(message))
    _decode_or_clean_error(head + message)


@given(st.sampled_from(CAPTURES), st.data())
def test_captures_with_bits_flipped(capture: Capture, data: st.DataObject) -> None:
    unit = bytearray(capture.unit)
    for _ in range(data.draw(st.integers(1, 4))):
        bit = data.draw(st.integers(20 * 8, len(unit) * 8 - 1))
        unit[bit // 8] ^= 1 << (bit % 8)
    _decode_or_clean_error(bytes(unit))


@given(st.sampled_from(CAPTURES), st.data())
def test_captures_with_bytes_spliced(capture: Capture, data: st.DataObject) -> None:
    unit = capture.unit
    at = data.draw(st.integers(20, len(unit)))
    cut = data.draw(st.integers(at, len(unit)))
    message = unit[20:at] + data.draw(st.binary(max_size=40)) + unit[cut:]
    _decode_or_clean_error(unit[:16] + len(message).to_bytes(4, "big") + message)


# One capture of each message class, for the exhaustive mutations below.
SAMPLES = list({type(h.decode(c.unit)): c for c in CAPTURES}.values())


@pytest.mark.parametrize("capture", SAMPLES, ids=[c.id for c in SAMPLES])
def test_captures_truncated_anywhere(capture: Capture) -> None:
    unit = capture.unit
    for cut in range(len(unit)):
        with pytest.raises(h.HandleWireError):
            h.decode(unit[:cut])
        fixed = unit[:16] + max(0, cut - 20).to_bytes(4, "big") + unit[20:cut]
        _decode_or_clean_error(fixed)


@pytest.mark.parametrize("capture", SAMPLES, ids=[c.id for c in SAMPLES])
def test_captures_with_huge_length_fields(capture: Capture) -> None:
    unit = capture.unit
    for at in range(20, len(unit) - 3):
        for value in (0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x00FFFFFF, 0x00010000):
            _decode_or_clean_error(_with_length(unit, at, value))


def test_random_datagrams_never_break_the_reassembler() -> None:
    rng = random.Random(28)
    first, second = BY_ID["udp:7"].packets
    reassembler = h.UdpReassembler(max_pending=4)
    for _ in range(2000):
        packet = bytearray(rng.choice((first, second)))
        for _ in range(rng.randint(0, 3)):
            packet[rng.randrange(len(packet))] = rng.randrange(256)
        try:
            unit = reassembler.feed(bytes(packet[: rng.randint(0, len(packet))]), rng.randrange(3))
        except h.HandleWireError:
            continue
        if unit is not None:
            _decode_or_clean_error(unit)
    assert reassembler.pending <= 4
