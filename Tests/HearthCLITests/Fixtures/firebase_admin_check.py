"""Drives a running `hearth serve` with the real firebase-admin SDK, as an app's backend tooling would.

usage: firebase_admin_check.py HOST:PORT PROJECT

Points firebase-admin at Hearth as an Auth emulator (FIREBASE_AUTH_EMULATOR_HOST), then: creates a
user, looks it up by uid and email, sets custom claims, mints a custom token, exchanges it over the
Auth REST API, calls the `whoami` callable with the resulting ID token, verifies that token with the
SDK, makes a session cookie from it and verifies that, lists users, deletes the user and checks it is gone; imports a user with a Firebase scrypt
hash (firebase/scrypt's example) and signs in with its password; generates password-reset and
email-verification links and uses their codes; signs in with an email link it generated; enqueues tasks on a task queue through
the Cloud Tasks API (CLOUD_TASKS_EMULATOR_HOST) and deletes them. Prints one JSON line of results; any failure raises
(non-zero exit) with the reason.
"""
import base64
import datetime
import json
import urllib.parse
import os
import sys
import urllib.request

host, project = sys.argv[1], sys.argv[2]
os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = host
os.environ["CLOUD_TASKS_EMULATOR_HOST"] = host

import firebase_admin  # noqa: E402  (the variable must be set before the SDK reads it)
import firebase_admin.exceptions  # noqa: E402
from firebase_admin import auth  # noqa: E402

app = firebase_admin.initialize_app(options={"projectId": project})


def post(path, body, headers=None):
    request = urllib.request.Request(
        f"http://{host}{path}", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(response.read())


results = {}
user = auth.create_user(uid="py-user", email="py@example.com", display_name="Py User", email_verified=True)
assert user.uid == "py-user", user.uid
by_uid = auth.get_user("py-user")
assert by_uid.email == "py@example.com" and by_uid.display_name == "Py User" and by_uid.email_verified, by_uid._data
by_email = auth.get_user_by_email("py@example.com")
assert by_email.uid == "py-user", by_email.uid
results["lookup"] = "ok"

try:
    auth.create_user(email="py@example.com")
    raise AssertionError("a duplicate email was accepted")
except auth.EmailAlreadyExistsError:
    results["duplicate"] = "EmailAlreadyExistsError"

auth.set_custom_user_claims("py-user", {"role": "editor", "level": 3})
assert auth.get_user("py-user").custom_claims == {"role": "editor", "level": 3}
auth.update_user("py-user", display_name="Renamed", disabled=False)
assert auth.get_user("py-user").display_name == "Renamed"

custom = auth.create_custom_token("py-user", {"plan": "pro"})
custom = custom.decode() if isinstance(custom, bytes) else custom
signed_in = post("/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken?key=fake-api-key",
                 {"token": custom, "returnSecureToken": True})
id_token = signed_in["idToken"]
assert signed_in["refreshToken"] and signed_in["expiresIn"] == "3600", signed_in

called = post("/whoami", {"data": None}, {"Authorization": f"Bearer {id_token}"})
claims = called["result"]["claims"]
assert called["result"]["uid"] == "py-user", called
assert claims["role"] == "editor" and claims["level"] == 3 and claims["plan"] == "pro", claims
results["callable_claims"] = {k: claims[k] for k in ("role", "level", "plan")}

decoded = auth.verify_id_token(id_token)
assert decoded["uid"] == "py-user" and decoded["role"] == "editor", decoded
results["verify_id_token"] = "ok"

cookie = auth.create_session_cookie(id_token, expires_in=datetime.timedelta(days=5))
session = auth.verify_session_cookie(cookie, check_revoked=True)
assert session["uid"] == "py-user" and session["role"] == "editor", session
assert session["iss"] == f"https://session.firebase.google.com/{project}", session
assert session["exp"] - session["iat"] == 5 * 86400, session
try:
    auth.verify_session_cookie(id_token)
    raise AssertionError("an ID token was accepted as a session cookie")
except auth.InvalidSessionCookieError:
    pass
results["session_cookie"] = "ok"

listed = [u.uid for u in auth.list_users().iterate_all()]
assert "py-user" in listed, listed

signer = base64.b64decode("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")
imported = auth.import_users(
    [auth.ImportUserRecord(uid="py-imported", email="imported@example.com", email_verified=True,
                           password_hash=base64.b64decode("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="),
                           password_salt=base64.b64decode("42xEC+ixf3L2lw==")),
     auth.ImportUserRecord(uid="py-user", email="clash@example.com")],
    hash_alg=auth.UserImportHash.scrypt(key=signer, rounds=8, memory_cost=14, salt_separator=base64.b64decode("Bw==")))
assert imported.success_count == 1 and imported.failure_count == 1, (imported.success_count, [e.reason for e in imported.errors])
assert imported.errors[0].index == 1, imported.errors[0].index
password_sign_in = post("/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=fake-api-key",
                        {"email": "imported@example.com", "password": "user1password", "returnSecureToken": True})
assert password_sign_in["localId"] == "py-imported", password_sign_in
assert auth.get_user("py-imported").user_metadata.last_refresh_timestamp is not None, "a sign-in sets lastRefreshAt"
listed_imported = [u for u in auth.list_users().iterate_all() if u.uid == "py-imported"][0]
assert listed_imported.password_hash and listed_imported.password_salt, listed_imported._data
assert auth.get_user("py-imported")._data.get("passwordHash") == "UkVEQUNURUQ=", "only listUsers has the hash"
results["import_scrypt"] = "ok"

reset_link = auth.generate_password_reset_link("imported@example.com")
reset_code = urllib.parse.parse_qs(urllib.parse.urlparse(reset_link).query)["oobCode"][0]
post("/identitytoolkit.googleapis.com/v1/accounts:resetPassword?key=fake-api-key", {"oobCode": reset_code, "newPassword": "brand-new-1"})
post("/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=fake-api-key",
     {"email": "imported@example.com", "password": "brand-new-1", "returnSecureToken": True})
auth.update_user("py-imported", email_verified=False)
verify_link = auth.generate_email_verification_link("imported@example.com")
verify_code = urllib.parse.parse_qs(urllib.parse.urlparse(verify_link).query)["oobCode"][0]
post("/identitytoolkit.googleapis.com/v1/accounts:update?key=fake-api-key", {"oobCode": verify_code})
assert auth.get_user("py-imported").email_verified
results["links"] = "ok"

# Email-link sign-in: the Admin SDK's generated link carries the code the app signs in with.
settings = auth.ActionCodeSettings(url="https://app.example.com/finish", handle_code_in_app=True)
sign_in_link = auth.generate_sign_in_with_email_link("passwordless@example.com", settings)
sign_in_code = urllib.parse.parse_qs(urllib.parse.urlparse(sign_in_link).query)["oobCode"][0]
linked = post("/identitytoolkit.googleapis.com/v1/accounts:signInWithEmailLink?key=fake-api-key",
              {"email": "passwordless@example.com", "oobCode": sign_in_code})
assert linked["isNewUser"] is True and auth.get_user(linked["localId"]).email_verified, linked
results["email_link"] = "ok"

# Lookups answer each user once; a phone number is a provider of its own; cleared claims are {}.
got = auth.get_users([auth.UidIdentifier("py-user"), auth.UidIdentifier("py-user"), auth.EmailIdentifier("py@example.com")])
assert [u.uid for u in got.users] == ["py-user"], [u.uid for u in got.users]
phone_user = auth.create_user(uid="py-phone", phone_number="+15555550100")
assert [(p.provider_id, p.uid) for p in auth.get_user("py-phone").provider_data] == [("phone", "+15555550100")], auth.get_user("py-phone")._data
auth.set_custom_user_claims("py-user", None)
assert auth.get_user("py-user")._data.get("customAttributes") == "{}", auth.get_user("py-user")._data
results["lookups"] = "ok"

auth.delete_user("py-user")
try:
    auth.get_user("py-user")
    raise AssertionError("the deleted user is still there")
except auth.UserNotFoundError:
    results["deleted"] = "UserNotFoundError"

# A task for EchoUnit's "work" queue, an hour ahead, as a backend script would enqueue it; then
# removed before it runs, and a second removal is the API's NotFound.
from firebase_admin import functions  # noqa: E402
queue = functions.task_queue("work")
# Python's SDK sends its argument as the body, so the task queue envelope {"data": …} is the
# caller's to write (as Firebase's own Python sample does).
task_id = queue.enqueue({"data": {"uid": "nobody", "title": "t", "body": "b"}},
                        functions.TaskOptions(schedule_delay_seconds=3600, task_id="py-task-1", dispatch_deadline_seconds=60))
assert task_id == "py-task-1", task_id
generated = queue.enqueue({"data": {"uid": "nobody"}}, functions.TaskOptions(schedule_delay_seconds=3600))
try:
    queue.enqueue({"uid": "unwrapped"})
    raise AssertionError("a body without the {data} envelope was accepted")
except firebase_admin.exceptions.InvalidArgumentError:
    pass
assert generated and generated != task_id, generated
queue.delete("py-task-1")
queue.delete(generated)
try:
    queue.delete("py-task-1")
    raise AssertionError("a deleted task was deleted again")
except firebase_admin.exceptions.NotFoundError:
    results["task_queue"] = "ok"

batch = auth.delete_users(["never-1", "never-2"])
assert batch.success_count == 2 and batch.failure_count == 0, (batch.success_count, batch.failure_count)
print(json.dumps(results, sort_keys=True))
