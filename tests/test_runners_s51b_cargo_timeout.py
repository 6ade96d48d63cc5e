"""QA40 §3: a cargo test binary killed at its timeout threw away every result libtest had printed (a real
failure hidden, "0 cases"), did not name the test that hung, and advised ``file::test``, which cargo refuses
(7005). It now keeps the finished cases, names the unfinished test, and gives advice cargo can take."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.runner_projects import require
from tests.testing_service import finish, service_for


def test_a_cargo_binary_that_times_out_keeps_its_finished_cases_and_names_the_hung_test(
        tmp_path: Path, services: list[TestingService]) -> None:
    require("cargo")
    repo = make_repo(tmp_path / "repo", {
        "rs/Cargo.toml": '[package]\nname = "hangs"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
        "rs/src/lib.rs": "pub fn two() -> i32 { 2 }\n",
        "rs/tests/other.rs": (
            "#[test]\nfn unrelated() {}\n\n"
            "#[test]\nfn hangs() { std::thread::sleep(std::time::Duration::from_secs(3600)); }\n\n"
            '#[test]\nfn zz_after() { assert_eq!(hangs::two(), 3, "math broke"); }\n'),
    })
    service = service_for(repo, target_timeout_sec=4, retry_failed=False)
    services.append(service)
    run = finish(service.start_run(["rs/tests/other.rs"]), timeout=300)
    (result,) = run.targets
    final = result.final
    assert final is not None and final.outcome == "timeout", final
    cases = {c.case_id: c.outcome for c in final.cases}
    assert cases == {"rs/tests/other.rs::unrelated": "passed", "rs/tests/other.rs::zz_after": "failed"}, cases
    failed = next(c for c in final.cases if c.outcome == "failed")
    assert "timeout killed it" in failed.message  # libtest prints the panic only at the end
    assert "while running rs/tests/other.rs::hangs;" in final.message, final.message
    assert "2 cases had finished" in final.message
    assert "::<case>" not in final.message and "file::test" not in final.message
    assert "tests.runners.cargo.timeout_sec" in final.message
