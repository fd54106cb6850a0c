"""Dataset registry and fetcher: where the workbench's real datasets lie and how to get them.

The manifest is ``data/registry.json``; the data directory is an explicit argument, else
``$WORKBENCH_DATA``, else ``../shared/data`` beside the checkout, else the project's ``data/`` folder when it
holds a dataset, else a per-user folder. :func:`ensure_dataset` downloads a missing dataset on first use
(``$WORKBENCH_DATA_MIRROR`` replaces the origins); :func:`cache_dir` is where generated files go.

Example:
    >>> from workbench.data import dataset_path, list_datasets
    >>> [d.name for d in list_datasets()][:2]
    ['planetoid-cora', 'planetoid-citeseer']
    >>> dataset_path("karate", "../shared/data")  # doctest: +SKIP
    PosixPath('.../shared/data/graphs/karate.mtx')
"""

from workbench.data.convert import ConvertSpec
from workbench.data.fetch import ChecksumError, ensure_dataset, fetch, fetch_file
from workbench.data.registry import (
    DATA_ENV_VAR,
    DatasetInfo,
    DatasetMissing,
    FileInfo,
    cache_dir,
    data_dir,
    dataset_path,
    dataset_status,
    get_dataset,
    list_datasets,
    resolve_data_dir,
    verify,
)

__all__ = [
    "DATA_ENV_VAR",
    "ChecksumError",
    "ConvertSpec",
    "DatasetInfo",
    "DatasetMissing",
    "FileInfo",
    "cache_dir",
    "data_dir",
    "ensure_dataset",
    "dataset_path",
    "dataset_status",
    "fetch",
    "fetch_file",
    "get_dataset",
    "list_datasets",
    "resolve_data_dir",
    "verify",
]
