/** The config file's name in the cipher directory (gocryptfs.conf); a module of its own, so that the command line knows it without loading the config code. */
export const CONF_NAME = 'gocryptfs.conf';
