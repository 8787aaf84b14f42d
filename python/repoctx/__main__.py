from repoctx.cli import main

raise SystemExit(main())
