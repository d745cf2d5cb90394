"""Dataset files as they come: a damaged one is an error naming the file (and the row,
where one row is bad), never a bare EOFError, IndexError or ValueError; a row cut short is
a gap; a service with two pods' files is their sum."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from stackgraph.eval.datasets import DatasetError
from stackgraph.eval.datasets._common import read_csv, read_json
from stackgraph.eval.datasets._nezha_format import faults, read_pods, read_table
from stackgraph.eval.datasets.nezha_tt import _logs
from stackgraph.eval.datasets.rcd_sockshop import _read

GO_TIME = "2023-01-29 08:41:09.043078357 +0000 UTC m=+0.119240217"


def gz(path: Path, text: str) -> Path:
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_a_gzip_file_cut_short_is_named(tmp_path: Path) -> None:
    whole = gz(tmp_path / "08_50_log.csv.gz", "a,b\n" + "1,2\n" * 5000).read_bytes()
    (tmp_path / "08_50_log.csv.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DatasetError, match=r"cannot read .*08_50_log\.csv\.gz.*ended before"):
        read_csv(tmp_path / "08_50_log.csv.gz")
    (tmp_path / "x.csv").write_bytes(b"a,b\n\xff\xfe,1\n")
    with pytest.raises(DatasetError, match=r"cannot read .*x\.csv"):
        read_csv(tmp_path / "x.csv")


def test_a_label_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    day = tmp_path / "2023-01-29"
    day.mkdir()
    label = day / "2023-01-29-fault_list.json"
    label.write_text('{"0": [{"inject_time": ')
    with pytest.raises(DatasetError, match=r"cannot read .*fault_list\.json"):
        faults(day)
    label.write_text(json.dumps({"0": [{"inject_pod": "ts-a-1-2"}]}))
    with pytest.raises(DatasetError, match=r"fault_list\.json: expected .*inject_time"):
        faults(day)
    with pytest.raises(DatasetError, match="missing label file"):
        read_json(tmp_path / "nope.json")


def test_a_junk_time_names_its_row(tmp_path: Path) -> None:
    table = f"Time,CpuUsage\n{GO_TIME},1\n{GO_TIME},2\ngarbage,3\n"
    with pytest.raises(DatasetError, match=r"front\.csv\.gz: row 4: Time is 'garbage'"):
        read_table(gz(tmp_path / "front.csv.gz", table), "Time")
    header = "Timestamp,TimeUnixNano,Node,PodName,Container,TraceID,SpanID,Log\n"
    row = "t,{},n,ts-a-service-5f55b6cf68-77cfw,c,tr,sp,line\n"
    log = gz(tmp_path / "08_50_log.csv.gz", header + row.format(1674981669000000000)
             + row.format("soon"))  # fmt: skip
    with pytest.raises(DatasetError, match=r"08_50_log\.csv\.gz: row 3: TimeUnixNano is 'soon'"):
        _logs([(0.0, log)], ("ts-a-service",))


def test_a_row_cut_short_is_a_gap(tmp_path: Path) -> None:
    path = tmp_path / "anomalous.csv"
    path.write_text("time,carts_cpu,carts_mem\n1,0.5,10\n2,0.6\n3\n")
    times, cols = _read(path)
    assert times.tolist() == [1, 2, 3]
    assert np.isnan(cols["carts_mem"][1:]).all() and np.isnan(cols["carts_cpu"][2])


def test_a_service_with_two_pods_is_their_sum(tmp_path: Path) -> None:
    """A pod replaced during the day leaves two metric files of one service: the old pod's
    last minute and the new pod's first overlap, and the rest follow each other."""
    cols = (
        "Time,CpuUsage(m),MemoryUsage(Mi),NetworkReceiveBytes,NetworkTransmitBytes,PodWorkload(Ops)"
    )

    def pod(name: str, minutes: list[int], cpu: float) -> None:
        rows = [f"2023-01-29 08:{m:02d}:{9 + m % 2:02d}.1 +0000 UTC m=+1.0,{cpu},1,2,3,4"
                for m in minutes]  # fmt: skip
        gz(tmp_path / f"{name}_metric.csv.gz", "\n".join([cols, *rows]) + "\n")

    pod("ts-a-service-5f55b6cf68-77cfw", [41, 42, 43], 100.0)
    pod("ts-a-service-7d9f8b7c5d-x2x7z", [43, 44], 50.0)
    pod("ts-b-service-84cbf6c798-7njv6", [41, 42], 10.0)
    pods = read_pods(tmp_path)
    assert pods.services == ("ts-a-service", "ts-b-service")
    cpu = {m.service: m for m in pods.series if m.name == "cpu"}
    assert cpu["ts-a-service"].values.tolist() == [1.0, 1.0, 1.5, 0.5]
    assert np.diff(cpu["ts-a-service"].times).tolist() == [60.0, 60.0, 60.0]
    assert cpu["ts-b-service"].values.tolist() == [0.1, 0.1]  # one pod: as it was
    assert pods.workload["ts-a-service"][1].tolist() == [4.0, 4.0, 8.0, 4.0]
