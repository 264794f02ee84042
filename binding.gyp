{
  # es-lock-proxy's own ZooKeeper addon (native/): built by scripts/build-native.mjs at
  # postinstall against the C client (static library and headers) that the exactly pinned
  # `zookeeper` package builds in its own install script. Nothing of that package is modified.
  "variables": {
    "zk_client_dir": "<!(node scripts/build-native.mjs --print-client-dir)"
  },
  "targets": [
    {
      "target_name": "es_lock_proxy_zk",
      "sources": ["native/node-zk.cpp", "native/zk-multi.c", "native/zk-requests.c"],
      "include_dirs": [
        "native",
        "<(zk_client_dir)/include",
        "<(zk_client_dir)/generated",
        "<(zk_client_dir)/src",
        "<!(node -e \"require('nan')\")"
      ],
      # Optimised: node-gyp's Release configuration (-O3). Upstream appends -O0, which overrides it.
      "libraries": ["<(zk_client_dir)/.libs/libzookeeper_st.a"]
    }
  ]
}
