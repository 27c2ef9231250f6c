build/tests/fuzz_yaml_to_json_replay tests/fuzz/crashes/yaml_to_json/escape-underscore-latin1-byte   # "\_" read by yaml-cpp as the byte 0xA0, not U+00A0
