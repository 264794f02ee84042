{
  # es-lock-proxy's own ZooKeeper addon: built by scripts/build-native.mjs at postinstall
  # (node-gyp --directory native) against the C client (static library and headers) that the
  # exactly pinned `zookeeper` package builds in its own install script; that package is only
  # read. This file is not at the package root on purpose: there, npm would run its own
  # `node-gyp rebuild` as an install script, in parallel with the one that builds the C client.
  "variables": {
    "zk_client_dir": "<!(node ../scripts/build-native.mjs --print-client-dir)"
  },
  "targets": [
    {
      "target_name": "es_lock_proxy_zk",
      "sources": ["node-zk.cpp", "zk-multi.c", "zk-requests.c", "zk-ephemerals.c"],
      "include_dirs": [
        ".",
        "<(zk_client_dir)/include",
        "<(zk_client_dir)/generated",
        "<(zk_client_dir)/src",
        "<!(node -e \"require('nan')\")"
      ],
      # Optimised: node-gyp's Release configuration (-O3). Upstream appends -O0, which overrides it.
      "libraries": ["<(zk_client_dir)/.libs/libzookeeper_st.a"],
      "conditions": [
        # Each request in one send (zk-send-framing.c): a GNU ld --wrap of the client's send queue.
        ["OS=='linux'", {
          "sources": ["zk-send-framing.c"],
          "ldflags": ["-Wl,--wrap=adaptor_send_queue"]
        }]
      ]
    }
  ]
}
