from doikit.cli import main

main()
