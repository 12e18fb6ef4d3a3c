"""Operator mode: clients log in with a user JWT that chains up to a trusted operator.

nats-server's ``processClientOrLeafAuthentication`` for JWTs, in the order it checks:

1. The CONNECT carries ``jwt``; it decodes as a user claim signed by its ``iss`` (else refused).
2. Its ``exp`` and ``nbf`` hold on the server's clock.
3. The account is ``issuer_account`` if set, else ``iss``; it must be known (the resolver's
   accounts, each itself signed by the operator or one of its signing keys, checked when loaded)
   and unexpired, and ``iss`` must be the account or one of its signing keys. A *scoped* signing
   key replaces the user's permissions and limits with its template (a user it signs must carry
   none of its own).
4. Unless the user is a bearer token, ``sig`` is the nonce of the connection's INFO signed by the
   user's key (``sub``).
5. Not revoked: the account's ``revocations`` names the user (or ``*``) at or after the JWT's ``iat``.
6. ``src`` CIDRs hold the client's address, ``times`` (in ``locale``) hold now, and
   ``allowed_connection_types`` names the client's kind.

Every refusal is ``Authorization Violation``, as nats-server answers them all. What a logged-in
user then may do (permissions, ``subs``/``data``/``payload`` limits, the expiry timer, the
account's connection limit) is a :class:`JwtUser`, enforced by the connection.
"""

from __future__ import annotations

import datetime
import ipaddress
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..protocol.jwt import JwtError, Token, decode
from ..protocol.jwt.keys import PREFIX_ACCOUNT, PREFIX_OPERATOR, PREFIX_USER, KeyError_, decode_public
from ..protocol.jwt.validation import account_issues
from ..subjects import is_valid_subject, subject_is_subset_match
from .auth import Auth, User
from .auth_callout_settings import CalloutSettings
from .imports import Export, Import
from .js_limits import UNLIMITED, JetStreamLimits
from .jwt_exports import (
    activation_revoked,
    export_details,
    import_from_claim,
    position_allows,
    with_expiry,
    with_response,
)
from .nkeys import verify_signature
from .permissions import Permissions, SubjectRules
from .responses import ResponsePermission
from .scope_template import TemplateError, TemplateValues, fill_template

if TYPE_CHECKING:
    from .resolver_dir import DirStore

__all__ = ["JwtAccount", "JwtUser", "OperatorAuth", "account_from_jwt", "is_key", "name_tag", "scoped_user"]


def name_tag(auth: object, account: str) -> str:
    """Go's ``getNameTag``: an account JWT's ``name`` where the server runs on one (operator
    mode), else the account's name."""
    found = auth.accounts.get(account) if isinstance(auth, OperatorAuth) else None
    return found.name_tag if found is not None and found.name_tag else account


def is_key(text: str, role: int) -> bool:
    try:
        decode_public(text, role)
    except KeyError_:
        return False
    return True


@dataclass(frozen=True)
class JwtUser(User):
    """A user logged in with a JWT: its limits (-1: none, 0: none allowed) and expiry (unix
    seconds, 0: never)."""

    expires: int = 0
    max_subs: int = -1
    max_payload: int = -1
    max_data: int = -1
    bearer: bool = False
    #: The JWT's ``iat``, which revocations compare with.
    issued_at: int = 0
    #: The JWTs' ``name``s, which ``$SYS.REQ.USER.INFO`` shows.
    user_name: str = ""
    account_name: str = ""
    #: The account signing key that issued the JWT ("" when the account's own key did): a claim
    #: update that drops the key or changes its scope closes the client (``server/claim_live.py``).
    signing_key: str = ""
    #: The JWT gives no permissions of its own, so the account's ``default_permissions`` apply
    #: (and a claim update's new defaults replace them on the connection).
    default_permissions: bool = False


@dataclass(frozen=True)
class JwtAccount:
    """An account JWT the server trusts."""

    public_key: str
    name: str
    token: str
    #: Signing keys: key -> the scope's template (``None``: an unscoped key).
    signing_keys: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    revocations: dict[str, int] = field(default_factory=dict)
    max_connections: int = -1
    max_subs: int = -1
    max_payload: int = -1
    jetstream: bool = False
    js_limits: JetStreamLimits = UNLIMITED
    default_permissions: dict[str, Any] = field(default_factory=dict)
    expires: int = 0
    #: ``limits.disallow_bearer``: bearer user JWTs are refused (and closed by a claim update).
    disallow_bearer: bool = False
    exports: tuple[tuple[Export, bool], ...] = ()
    imports: tuple[tuple[Import, str], ...] = ()
    #: The JWT's ``name`` as written (``{{account-name()}}``) and ``tags`` (``{{account-tag()}}``).
    name_tag: str = ""
    tags: tuple[str, ...] = ()
    #: The account's ``authorization`` claims: its users log in through its auth callout.
    callout: CalloutSettings | None = None


def _int(value: Any, default: int = -1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _js_limits(limits: dict[str, Any]) -> JetStreamLimits:
    """A JWT's JetStream limits as nats-server reads them (``updateAccountClaimsWithRefresh``:
    a stream byte or ack-pending limit that is not positive is none)."""

    def unlimited(key: str) -> int:
        value = _int(limits.get(key), 0)
        return value if value > 0 else -1

    return JetStreamLimits(  # a key left out is Go's zero value
        max_memory=_int(limits.get("mem_storage"), 0),
        max_storage=_int(limits.get("disk_storage"), 0),
        max_streams=_int(limits.get("streams"), 0),
        max_consumers=_int(limits.get("consumer"), 0),
        max_ack_pending=unlimited("max_ack_pending"),
        memory_max_stream_bytes=unlimited("mem_max_stream_bytes"),
        storage_max_stream_bytes=unlimited("disk_max_stream_bytes"),
        max_bytes_required=limits.get("max_bytes_required") is True,
    )


def account_from_jwt(text: str, trusted: set[str], now: float | None = None) -> JwtAccount:
    """Decode and check an account JWT against the trusted operator keys (``JwtError`` if not)."""
    token = decode(text)
    claims = token.claims
    subject = claims.get("sub")
    if token.kind != "account" or not isinstance(subject, str) or not is_key(subject, PREFIX_ACCOUNT):
        raise JwtError("not an account JWT")
    if claims.get("iss") not in trusted:
        raise JwtError("account JWT not signed by a trusted operator")
    nats = token.nats
    keys: dict[str, dict[str, Any] | None] = {}
    for entry in nats.get("signing_keys") or []:
        if isinstance(entry, str):
            keys[entry] = None
        elif isinstance(entry, dict) and isinstance(entry.get("key"), str):
            template = entry.get("template")
            keys[entry["key"]] = template if isinstance(template, dict) else {}
    limits = nats.get("limits") if isinstance(nats.get("limits"), dict) else {}
    assert isinstance(limits, dict)
    js_keys = ("mem_storage", "disk_storage", "streams", "consumer")
    jetstream = any(_int(limits.get(k), 0) != 0 for k in js_keys)
    js = _js_limits(limits)
    tiers = limits.get("tiered_limits")
    if not (_int(limits.get("mem_storage"), 0) or _int(limits.get("disk_storage"), 0)) and isinstance(tiers, dict):
        # nats-server: the account's own JetStream limits win; without storage, its tiers count.
        named = {k: _js_limits(v) for k, v in tiers.items() if isinstance(v, dict)}
        jetstream = any(t.max_memory != 0 or t.max_storage != 0 for t in named.values())
        js = JetStreamLimits.tiered(named)
    issues = account_issues(nats)
    if issues:
        # nats-server's verifyAccountClaims: a blocking validation issue; the account is not loaded.
        raise JwtError(issues[0])
    imports = _imports(nats)
    if any(token and not _activation_fits(token, subject, imp) for imp, token in imports):
        # nats-server: a blocking validation issue of the account JWT; the account is not loaded.
        raise JwtError("activation token doesn't match the import it is included in")
    revocations = nats.get("revocations") if isinstance(nats.get("revocations"), dict) else {}
    assert isinstance(revocations, dict)
    defaults = nats.get("default_permissions")
    return JwtAccount(
        public_key=subject,
        name=str(claims.get("name") or subject),
        token=text,
        signing_keys=keys,
        revocations={k: v for k, v in revocations.items() if isinstance(v, int)},
        max_connections=_int(limits.get("conn")),
        max_subs=_int(limits.get("subs")),
        max_payload=_int(limits.get("payload")),
        jetstream=jetstream,
        js_limits=js if jetstream else UNLIMITED,
        default_permissions=defaults if isinstance(defaults, dict) else {},
        expires=_int(claims.get("exp"), 0),
        disallow_bearer=limits.get("disallow_bearer") is True,
        exports=_exports(nats),
        imports=imports,
        name_tag=str(claims.get("name") or ""),
        tags=tuple(t for t in nats.get("tags") or () if isinstance(t, str)),
        callout=_callout(subject, nats.get("authorization")),
    )


def _callout(account: str, claims: Any) -> CalloutSettings | None:
    """``ExternalAuthorization``: set when it names ``auth_users``."""
    if not isinstance(claims, dict):
        return None
    users = [u for u in claims.get("auth_users") or [] if isinstance(u, str)]
    if not users:
        return None
    allowed = [a for a in claims.get("allowed_accounts") or [] if isinstance(a, str)]
    xkey = claims.get("xkey")
    return CalloutSettings(
        account, account, tuple(users), tuple(allowed), operator=True, xkey=xkey if isinstance(xkey, str) else ""
    )


def _exports(nats: dict[str, Any]) -> tuple[tuple[Export, bool], ...]:
    """An account JWT's ``exports``: (export, whether an activation token is required)."""
    out = []
    for entry in nats.get("exports") or []:
        if not isinstance(entry, dict) or entry.get("type") not in ("service", "stream"):
            continue
        subject = entry.get("subject")
        if isinstance(subject, str) and is_valid_subject(subject):
            export = Export(entry["type"], subject, **export_details(entry))
            out.append((export, entry.get("token_req") is True))
    return tuple(out)


def _imports(nats: dict[str, Any]) -> tuple[tuple[Import, str], ...]:
    """An account JWT's ``imports``: (import, its activation token or "")."""
    out = []
    for entry in nats.get("imports") or []:
        if not isinstance(entry, dict) or entry.get("type") not in ("service", "stream"):
            continue
        subject, account = entry.get("subject"), entry.get("account")
        if not isinstance(subject, str) or not isinstance(account, str) or not is_valid_subject(subject):
            continue
        token = entry.get("token")
        out.append((import_from_claim(entry, subject, account), token if isinstance(token, str) else ""))
    return tuple(out)


def wired_imports(accounts: dict[str, JwtAccount], now: float) -> dict[str, tuple[Import, ...]]:
    """Each account's imports that hold: the exporter is known and exports a subject covering
    the import's, and a private export's import carries an activation token the exporter (or one
    of its signing keys) signed for the importer, unexpired, covering the subject. The others are
    left out, as nats-server leaves an import it cannot verify."""
    out: dict[str, tuple[Import, ...]] = {}
    for importer in accounts.values():
        kept = []
        for imp, token in importer.imports:
            exporter = accounts.get(imp.account)
            if exporter is None:
                continue
            match = [
                private
                for exp, private in exporter.exports
                if exp.kind == imp.kind and subject_is_subset_match(imp.subject, exp.subject)
            ]
            if not match:
                continue
            positioned = position_allows(imp, exporter.exports, importer.public_key)
            if positioned is False:
                continue
            if positioned is None:  # no account token position: a private export wants a token
                if all(match) and not _activation_ok(token, exporter, importer.public_key, imp, now):
                    continue
                if all(match) and activation_revoked(imp, exporter.exports, token):
                    continue
            if all(match):
                imp = with_expiry(imp, token)
            if imp.kind == "service":
                imp = with_response(imp, exporter.exports)
            kept.append(imp)
        if kept:
            out[importer.public_key] = tuple(kept)
    return out


def _activation_fits(text: str, importer: str, imp: Import) -> bool:
    """The checks of ``Import.Validate`` (blocking ones, not the times): the token decodes, is
    for the importing account, names the import's subject, and was issued by the exporting
    account (or for it, through ``issuer_account``)."""
    try:
        token = decode(text)
    except JwtError:
        return False
    nats = token.nats
    issuer = nats.get("issuer_account") or token.claims.get("iss")
    return token.claims.get("sub") == importer and nats.get("subject") == imp.subject and issuer == imp.account


def _activation_ok(text: str, exporter: JwtAccount, importer: str, imp: Import, now: float) -> bool:
    try:
        token = decode(text)
    except JwtError:
        return False
    claims = token.claims
    issuer = claims.get("iss")
    if issuer != exporter.public_key and issuer not in exporter.signing_keys:
        return False
    if token.nats.get("issuer_account") not in (None, "", exporter.public_key):
        return False
    exp = _int(claims.get("exp"), 0)
    subject = token.nats.get("subject")
    return (
        claims.get("sub") == importer
        and not (exp > 0 and now > exp)
        and isinstance(subject, str)
        and subject_is_subset_match(imp.subject, subject)
    )


def _rules(value: Any) -> SubjectRules | None:
    """A JWT's allow or deny list (``ValueError`` for an entry that is not a subject)."""
    if not isinstance(value, list) or not value:
        return None
    return SubjectRules([str(v) for v in value])


def _permissions(spec: dict[str, Any]) -> Permissions | None:
    """nats-server's ``buildPermissions`` of a JWT's ``pub``/``sub``/``resp``; ``None``: none set."""
    pub = spec.get("pub") if isinstance(spec.get("pub"), dict) else {}
    sub = spec.get("sub") if isinstance(spec.get("sub"), dict) else {}
    resp = spec.get("resp") if isinstance(spec.get("resp"), dict) else None
    assert isinstance(pub, dict) and isinstance(sub, dict)
    if not pub.get("allow") and not pub.get("deny") and not sub.get("allow") and not sub.get("deny") and not resp:
        return None
    perms = Permissions(
        _rules(pub.get("allow")), _rules(pub.get("deny")), _rules(sub.get("allow")), _rules(sub.get("deny"))
    )
    if resp:
        ttl = _int(resp.get("ttl"), 0)
        perms.response = ResponsePermission(_int(resp.get("max"), 1), ttl if ttl > 0 else 2 * 60 * 10**9)
        if perms.pub_allow is None:
            perms.pub_allow = SubjectRules([])
    return perms


def jwt_permissions(spec: dict[str, Any]) -> Permissions | None:
    """An account's ``default_permissions`` or a user JWT's (the auth callout's users too) as
    the connection enforces them."""
    return _permissions(spec)


def scoped_user(template: dict[str, Any], claims: dict[str, Any], account: JwtAccount) -> dict[str, Any] | None:
    """The ``nats`` claims of a user JWT a scoped signing key of ``account`` issued, as the scope
    makes them (``ValidateScopedSigner``, then ``processUserPermissionsTemplate``): the template's
    permissions and limits (from no limits), its ``{{...}}`` filled in for this user and account;
    None when the JWT sets permissions or limits of its own or the template cannot be filled."""
    found = claims.get("nats")
    nats: dict[str, Any] = found if isinstance(found, dict) else {}
    if not _has_no_permissions(nats):
        return None
    unlimited = {"subs": -1, "data": -1, "payload": -1}  # a scope's template starts there
    values = TemplateValues(
        str(claims.get("name") or ""),
        str(claims.get("sub") or ""),
        account.name_tag,
        account.public_key,
        nats.get("tags"),
        list(account.tags),
    )
    try:
        return {**nats, **unlimited, **fill_template(template, values)}
    except TemplateError:
        return None


def _has_no_permissions(nats: dict[str, Any]) -> bool:
    """A user a scoped key signs may set nothing of its own (``ValidateScopedSigner``: the
    permissions and limits must be Go's zero value, so even -1 limits refuse it)."""
    if _permissions(nats) is not None or nats.get("bearer_token") or nats.get("allowed_connection_types"):
        return False
    return not any(nats.get(k) for k in ("subs", "data", "payload", "src", "times", "times_location"))


def _locale_loads(nats: dict[str, Any]) -> bool:
    """The user's ``times_location`` is a zone Go's ``time.LoadLocation`` knows (the JWT library
    validates it with or without ``times``: a zone it cannot load fails the claims)."""
    locale = nats.get("times_location") or nats.get("locale") or ""
    if not isinstance(locale, str) or locale in ("", "UTC", "Local"):
        return True
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(locale)
    except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return False
    return True


def _in_times(nats: dict[str, Any], now: float) -> bool:
    ranges = nats.get("times")
    if not ranges:
        return True
    locale = nats.get("times_location") or nats.get("locale") or ""
    try:
        from zoneinfo import ZoneInfo

        zone: datetime.tzinfo = ZoneInfo(locale) if locale else datetime.datetime.now().astimezone().tzinfo  # type: ignore[assignment]
    except (ValueError, OSError, KeyError):  # an unknown or malformed locale (ZoneInfoNotFoundError): no window holds
        return False
    clock = datetime.datetime.fromtimestamp(now, zone).strftime("%H:%M:%S")
    for entry in ranges if isinstance(ranges, list) else []:
        if not isinstance(entry, dict):
            continue
        start, end = str(entry.get("start", "")), str(entry.get("end", ""))
        if start <= end and start <= clock <= end or start > end and (clock >= start or clock <= end):
            return True
    return False


def _in_src(nats: dict[str, Any], client_ip: str) -> bool:
    src = nats.get("src")
    if not src:
        return True
    entries = src if isinstance(src, list) else str(src).split(",")
    try:
        address = ipaddress.ip_address(client_ip)
    except ValueError:
        return False
    for entry in entries:
        try:
            if address in ipaddress.ip_network(str(entry).strip(), strict=False):
                return True
        except ValueError:
            continue
    return False


@dataclass
class OperatorAuth(Auth):
    """Authentication in operator mode: trusted operators and the accounts the resolver holds."""

    #: The operators' keys and their signing keys: who may sign an account JWT.
    trusted: set[str] = field(default_factory=set)
    accounts: dict[str, JwtAccount] = field(default_factory=dict)
    #: The NATS-based resolver's directory (``resolver: {type: full|cache, dir}``); None: MEMORY.
    resolver_store: DirStore | None = None
    #: The memory resolver's JWTs (``resolver_preload``), by account key: what it fetches for an
    #: expired account. Claim updates do not change them (Go's ``accountClaimUpdate`` does not
    #: ``Store``).
    preloaded: dict[str, str] = field(default_factory=dict)

    @property
    def wants_nonce(self) -> bool:
        return True

    def authenticate(
        self, connect: dict[str, Any], nonce: str = "", client_ip: str = "", kind: str = "STANDARD", now_ns: int = 0
    ) -> User | None:
        text = connect.get("jwt") or ""
        if not isinstance(text, str) or not text:
            return None
        try:
            token: Token = decode(text)
        except JwtError:
            return None
        claims, nats = token.claims, token.nats
        user = claims.get("sub")
        issuer = claims.get("iss")
        if token.kind != "user" or not isinstance(user, str) or not is_key(user, PREFIX_USER):
            return None
        now = now_ns / 1e9 if now_ns else time.time()
        exp, nbf, iat = _int(claims.get("exp"), 0), _int(claims.get("nbf"), 0), _int(claims.get("iat"), 0)
        if (exp > 0 and now > exp) or (nbf > 0 and nbf > now):  # Go's jwt: only positive times count
            return None
        account_key = nats.get("issuer_account") or issuer
        account = self.accounts.get(str(account_key))
        if account is None or (account.expires > 0 and now > account.expires):
            return None
        if issuer != account.public_key:
            if issuer not in account.signing_keys:
                return None
            template = account.signing_keys[str(issuer)]
            if template is not None:
                scoped = scoped_user(template, claims, account)
                if scoped is None:
                    return None
                nats = scoped
        bearer = nats.get("bearer_token") is True
        if bearer and account.disallow_bearer:
            return None
        if not bearer and not verify_signature(user, nonce, connect.get("sig") or ""):
            return None
        revoked = [account.revocations.get(user), account.revocations.get("*")]
        if any(at is not None and at >= iat for at in revoked):
            return None
        if not _in_src(nats, client_ip) or not _locale_loads(nats) or not _in_times(nats, now):
            return None
        kinds = nats.get("allowed_connection_types")
        if kinds and kind not in kinds:
            return None
        try:
            perms = _permissions(nats)
            defaults = perms is None
            if defaults and account.default_permissions:
                perms = _permissions(account.default_permissions)
        except ValueError:  # a subject that is not one: a blocking validation issue of the JWT
            return None
        return JwtUser(
            name=user,
            permissions=perms,
            account=account.public_key,
            expires=exp,
            # Absent is Go's zero: none allowed (-1 is no limit), as nats-server enforces it.
            max_subs=_int(nats.get("subs"), 0),
            max_payload=_int(nats.get("payload"), 0),
            max_data=_int(nats.get("data"), 0),
            bearer=bearer,
            issued_at=iat,
            user_name=str(claims.get("name") or ""),
            account_name=account.name,
            signing_key=str(issuer) if issuer != account.public_key else "",
            default_permissions=defaults,
        )


def operator_keys(token: Token) -> set[str]:
    """An operator JWT's key and its signing keys (who may sign its accounts)."""
    keys = {str(token.claims.get("sub"))}
    for entry in token.nats.get("signing_keys") or []:
        if isinstance(entry, str) and is_key(entry, PREFIX_OPERATOR):
            keys.add(entry)
    return keys
